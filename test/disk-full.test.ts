// A full disk under the embedded database, as CI runs it (as root, on a small tmpfs): a write that
// finds no space answers 507 `insufficient_storage` and stores nothing, health says why, reads go
// on, and once space is back the service writes again with no restart, nothing acknowledged lost.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseEnv, migratedDataDir, spawnService } from './child-process.js';
import { eventually } from './eventually.js';
import { isPostgres } from './harness.js';

const mountPoint = mkdtempSync(join(tmpdir(), 'ap-disk-full-'));
afterAll(() => {
  execFileSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

describe.skipIf(isPostgres())('a full disk', { timeout: 180_000 }, () => {
  it('answers 507, says so in health, and writes again once space is back', async () => {
    // Root, as CI runs: a mount that fails fails the test.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', mountPoint]);
    // A database made already (the first start is data-dir.test.ts's).
    const dataDir = await migratedDataDir(join(mountPoint, 'data'));
    const server = spawnService('main', [], {
      ...baseEnv(),
      NODE_ENV: 'test',
      JWT_SECRET: 'disk-full-secret-disk-full-secret-disk-full-0123',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      HOST: '127.0.0.1',
      PORT: '0',
    });
    try {
      const [, url] = await server.waitFor(/"url":"(http[^"]+)"/);
      const reg = await fetch(`${url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'full@example.test', password: 'a-long-password-1', name: 'Full' }),
      });
      const { accessToken } = (await reg.json()) as { accessToken: string };
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` };
      let n = 0;
      const write = () =>
        fetch(`${url}/api/assistant/memory`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ content: `note ${n++} ` + 'x'.repeat(30_000), source: 'shared' }),
        });
      const count = async () => {
        const r = await fetch(`${url}/api/memories?limit=1`, { headers });
        expect(r.status).toBe(200);
        return ((await r.json()) as { total: number }).total;
      };
      expect((await write()).status).toBe(201);

      // The file system filled to the last byte.
      const filler = join(mountPoint, 'filler');
      try {
        writeFileSync(filler, Buffer.alloc(200 * 1024 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      let acknowledged = 1;
      const refused = await eventually(
        async () => {
          const r = await write();
          if (r.status === 201) acknowledged++;
          expect(r.status).toBe(507);
          return (await r.json()) as { code: string; detail: string };
        },
        { intervalMs: 1, timeoutMs: 120_000 },
      );
      expect(refused.code).toBe('insufficient_storage');
      const health = await fetch(`${url}/api/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: 'degraded', database: { diskFull: true } });
      // Reads go on: the connection was not left mid-protocol.
      expect(await count()).toBe(acknowledged);

      rmSync(filler);
      await eventually(async () => expect((await fetch(`${url}/api/health`)).status).toBe(200), {
        timeoutMs: 60_000,
      });
      expect((await write()).status).toBe(201);
      expect(await count()).toBe(acknowledged + 1);
    } finally {
      server.kill('SIGTERM');
      await server.exited;
    }
  });
});
