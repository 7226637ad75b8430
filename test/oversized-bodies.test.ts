// A body over a limit is answered 413 problem+json, and the client reads that answer every time,
// even while it is still sending: the server reads and drops the rest of the body rather than
// closing under the client (which made Node's fetch see EPIPE about one time in eight). The
// client is Node's own fetch in a process of its own (test/oversized-client.mjs; in the server's
// process the two would share one event loop and never race), streaming each body many times
// over to each limit: JSON (sent with its Content-Length, and streamed in chunks), an upload's
// file, a training file.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from './harness.js';

const LIMIT = 64 * 1024;
const ROUNDS = 50;
const client = fileURLToPath(new URL('./oversized-client.mjs', import.meta.url));

let t: TestApp;
let admin: TestUser;
let npc: TestUser;

beforeAll(async () => {
  t = await createTestApp({
    BODY_LIMIT: String(LIMIT),
    UPLOAD_LIMIT: String(LIMIT),
    TRAINING_FILE_LIMIT: String(LIMIT),
    UPLOAD_RATE_LIMIT: '100000',
  });
  admin = await createUser(t, 'cso');
  npc = await createUser(t, 'npc');
});
afterAll(() => t.close());

/** What the client read for each request of `kind`: `{ "413": n }` when every one got its 413
 * problem, else the other outcomes too (an EPIPE, an ECONNRESET, another status). */
async function send(kind: string): Promise<Record<string, number>> {
  const job = {
    url: t.url,
    token: admin.accessToken,
    npcUserId: npc.id,
    requests: ROUNDS,
    // Thirty-two times the limit: most of it is still on its way when the 413 is sent.
    bytes: 32 * LIMIT,
    kinds: [kind],
  };
  const { stdout } = await promisify(execFile)(process.execPath, [client, JSON.stringify(job)]);
  return (JSON.parse(stdout) as Record<string, Record<string, number>>)[kind]!;
}

describe('a body over its limit always gets its 413', () => {
  it('JSON with its Content-Length (refused before it is read)', async () => {
    expect(await send('json-length')).toEqual({ 413: ROUNDS });
  });

  it('JSON streamed in chunks (refused once the limit is passed)', async () => {
    expect(await send('json-stream')).toEqual({ 413: ROUNDS });
  });

  it("an upload's file", async () => {
    expect(await send('upload-stream')).toEqual({ 413: ROUNDS });
  });

  it('a training file', async () => {
    expect(await send('training-stream')).toEqual({ 413: ROUNDS });
  });

  it('the server answers as before afterwards', async () => {
    expect((await t.api('GET', '/api/health')).status).toBe(200);
  });
});
