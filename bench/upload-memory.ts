// Six maximal uploads of one account at once, to a server in a process of its own (started here
// on a fresh embedded database): the server's resident memory before, at its peak, after.
// Prints { before, peak, after, statuses } as JSON (MB). Run: npx tsx bench/upload-memory.ts [uploads] [bytes]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, spawnTs } from '../test/child-process.js';

const UPLOADS = Number(process.argv[2] ?? 6);
const LIMIT = Number(process.argv[3] ?? 20 * 1024 * 1024);
const dir = mkdtempSync(join(tmpdir(), 'ap-upload-rss-'));
const server = spawnTs(
  'src/main.ts',
  [],
  {
    ...baseEnv(),
    NODE_ENV: 'test',
    JWT_SECRET: 'upload-rss-secret-upload-rss-secret-upload-rss',
    DATA_DIR: dir,
    DATABASE_URL: '',
    HOST: '127.0.0.1',
    PORT: '0',
    UPLOAD_LIMIT: String(LIMIT),
    UPLOAD_QUOTA_BYTES: String(UPLOADS * LIMIT * 2),
  },
  { failsafeMs: 600_000 },
);
try {
  const [, url] = await server.waitFor(/"url":"(http[^"]+)"/);
  const rss = () =>
    Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024);
  const reg = await fetch(`${url}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'uploader@example.test', password: 'a-long-password-1', name: 'Up' }),
  });
  const { accessToken } = (await reg.json()) as { accessToken: string };
  const upload = (bytes: number) => {
    const form = new FormData();
    // Text (sniffed as UTF-8), every byte different from the last upload's.
    form.append('file', new Blob([Buffer.alloc(bytes, 0x61 + (bytes % 26))]), 'notes.txt');
    return fetch(`${url}/api/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}` },
      body: form,
    }).then(async (r) => (await r.arrayBuffer(), r.status));
  };
  await upload(1024); // the route's code loaded
  const before = rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 5);
  const statuses = await Promise.all(Array.from({ length: UPLOADS }, () => upload(LIMIT)));
  clearInterval(sampler);
  const after = rss();
  process.stdout.write(JSON.stringify({ before, peak: Math.max(peak, after), after, statuses }) + '\n');
} finally {
  server.kill('SIGTERM');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
