// Oversized requests (issue 42): how often a client that sends a body over a limit reads its 413
// problem, and how often the connection fails instead (EPIPE, ECONNRESET) while it still sends.
// The real app on the embedded database; the client (test/oversized-client.mjs: Node's own fetch,
// one request at a time) runs in a process of its own. Four kinds: a JSON body with its
// Content-Length (refused before it is read), the same streamed in chunks (refused once the limit
// is passed), an upload of one file over UPLOAD_LIMIT and a training file over TRAINING_FILE_LIMIT
// (multipart, streamed). Every limit is 1 MiB.
// Run: npx tsx bench/oversized.ts [--requests 200] [--mib 2]
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    mib: { type: 'string', default: '2' },
    kinds: { type: 'string', default: 'json-length,json-stream,upload-stream,training-stream' },
  },
});

const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  AUTH_RATE_LIMIT: '100000000',
  UPLOAD_RATE_LIMIT: '100000000',
  BODY_LIMIT: String(1024 * 1024),
  UPLOAD_LIMIT: String(1024 * 1024),
  TRAINING_FILE_LIMIT: String(1024 * 1024),
  ...embeddedDataDir(),
});
const deps = await createDeps(config);
const { app } = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
try {
  const users = deps.services.users;
  const admin = await users.create({
    email: 'oversized@example.test',
    password: 'a long password for the bench',
    role: 'cso',
    accountType: 'public',
  });
  const npc = await users.create({
    email: 'oversized-npc@example.test',
    password: 'a long password for the bench',
    role: 'silicon',
    accountType: 'npc',
  });
  const job = {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    token: (await deps.services.auth.issue(admin, 'web_portal')).accessToken,
    npcUserId: npc.id,
    requests: Number(values.requests),
    bytes: Number(values.mib) * 1024 * 1024,
    kinds: values.kinds.split(','),
  };
  const client = fileURLToPath(new URL('../test/oversized-client.mjs', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [client, JSON.stringify(job)]);
  const results = JSON.parse(stdout) as Record<string, Record<string, number>>;
  for (const [kind, counts] of Object.entries(results)) console.log(kind.padEnd(14), JSON.stringify(counts));
  console.log(JSON.stringify({ requests: job.requests, mib: Number(values.mib), results }));
} finally {
  await app.close();
  await deps.close();
}
