// Hostile input costs bounded work: a zip-bomb DOCX is refused within a memory bound (measured in
// a process of its own: test/extract-rss.ts), a JSON body nested thousands of levels deep is a
// 400 on REST and sync, sockets per account are capped, and a request body never finished gets
// 408 instead of holding its connection.
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildZipBomb, postForm } from './documents.js';
import { createTestApp, createUser, type TestApp, type TestUser } from './harness.js';
import { closeSockets, connectSocket } from './socket-client.js';

let t: TestApp;
let admin: TestUser;
let player: TestUser;

beforeAll(async () => {
  t = await createTestApp({ SOCKETS_PER_USER: '2', REQUEST_TIMEOUT_MS: '1000' });
  [admin, player] = await Promise.all([createUser(t, 'cso'), createUser(t, 'public')]);
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('bounded work on hostile input', { timeout: 120_000 }, () => {
  it('a zip-bomb DOCX is refused (413) without inflating it, in bounded memory', async () => {
    const npc = await t.deps.services.characters.createNpc({ name: 'Mara', description: 'the keeper' });
    const bomb = await buildZipBomb(256 * 1024 * 1024);
    const r = await postForm(
      t,
      '/api/training/ingest-file',
      admin.accessToken,
      { npcUserId: String(npc.id) },
      [{ name: 'bomb.docx', data: bomb }],
    );
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ code: 'payload_too_large' });
    expect(r.body.detail).toMatch(/expands past 32 MiB/);

    // Three at once, in a process of its own: its resident memory before, at its peak, after.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/extract-rss.ts', '3', String(512 * 1024 * 1024)],
      { env: { ...process.env, NODE_OPTIONS: '' } },
    );
    const m = JSON.parse(stdout) as { before: number; peak: number; after: number; results: string[] };
    console.info(
      `zip-bomb DOCX ×3 (512 MiB each inflated): RSS ${m.before} → peak ${m.peak} → ${m.after} MB`,
    );
    expect(m.results).toEqual(['too large', 'too large', 'too large']);
    // Three caps of 32 MiB inflated and dropped, and the readers' workers: far from gigabytes.
    expect(m.peak - m.before).toBeLessThan(300);
  });

  it('JSON nested 5,000 levels deep is a 400 on REST and sync, not a 500', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${admin.accessToken}` };
    const memory = await fetch(`${t.url}/api/assistant/memory`, {
      method: 'POST',
      headers,
      body: `{"content":"deep","source":"shared","metadata":${nested(5000)}}`,
    });
    expect(memory.status).toBe(400);
    expect(await memory.json()).toMatchObject({
      code: 'validation_failed',
      detail: 'The request body nests too deeply',
    });
    const sync = await fetch(`${t.url}/api/sync/ingest-event`, {
      method: 'POST',
      headers,
      body: `{"eventType":"x","payload":${nested(5000)}}`,
    });
    expect(sync.status).toBe(400);
    // Within the bound, the body is read as before (here: the route's own checks answer).
    const shallow = await t.api('POST', '/api/assistant/memory', {
      token: admin.accessToken,
      body: { content: 'shallow', source: 'shared', metadata: JSON.parse(nested(60)) },
    });
    expect(shallow.status).toBe(201);
  });

  it('an account holds at most SOCKETS_PER_USER sockets; a closed one frees its place', async () => {
    const auth = { token: player.accessToken };
    const first = await connectSocket(t.url, { auth });
    await connectSocket(t.url, { auth });
    await expect(connectSocket(t.url, { auth })).rejects.toMatchObject({ code: 'rate_limited', limit: 2 });
    // Another account is not counted with this one.
    const other = await connectSocket(t.url, { auth: { token: admin.accessToken } });
    other.close();
    first.close();
    await expect(
      (async () => {
        for (;;) {
          try {
            return await connectSocket(t.url, { auth });
          } catch (err) {
            if ((err as { code?: string }).code !== 'rate_limited') throw err;
          }
        }
      })(),
    ).resolves.toBeDefined();
  });

  it('a body that never finishes gets 408 and its connection closed', async () => {
    const { port } = new URL(t.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    socket.write(
      'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":',
    );
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/"code":"request_timeout"/);
  });
});
