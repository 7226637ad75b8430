// The embedded database's data directory as an operator meets it, with the real processes: one
// server per directory (a second server and the CLI refuse while it runs), and a first start that
// a kill -9 at any point of it cannot break.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseEnv, migratedDataDir, spawnService } from './child-process.js';
import { eventually } from './eventually.js';
import { isPostgres } from './harness.js';

const dirs: string[] = [];
function dataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'ap-data-dir-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const env = (dir: string) => ({
  ...baseEnv(),
  NODE_ENV: 'test',
  JWT_SECRET: 'data-dir-test-secret-data-dir-test-secret-0123',
  DATA_DIR: dir,
  DATABASE_URL: '',
  HOST: '127.0.0.1',
  PORT: '0',
});
const start = (dir: string) => spawnService('main', [], env(dir));
const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

// Each test starts the service several times: a generous failsafe for a busy machine, not a
// timing claim.
describe.skipIf(isPostgres())('the embedded data directory', { timeout: 180_000 }, () => {
  it('is one server’s: a second server and the CLI refuse while it runs', async () => {
    // A database made already (a first start is the next test's).
    const dir = await migratedDataDir(dataDir());
    const a = start(dir);
    try {
      await a.waitFor(/service ready/);
      // The lock is beside the cluster, the live process's.
      expect(readFileSync(join(dir, 'pglite.lock'), 'utf8')).toMatch(new RegExp(`^${a.pid}( |$)`));
      expect(existsSync(join(dir, 'pglite', 'server.lock'))).toBe(false);

      const b = start(dir);
      expect(await b.exited).toBe(1);
      expect(b.stderr).toBe(
        `cannot start: the embedded database in ${join(dir, 'pglite')} is in use by process ${a.pid} ` +
          `(another server on this DATA_DIR?): stop that process, or set DATA_DIR to another directory\n`,
      );
      const cli = spawnService('cli', ['users', 'list'], { ...env(dir), LOG_LEVEL: 'silent' });
      cli.end();
      expect(await cli.exited).toBe(1);
      const out = JSON.parse(cli.stdout.trim().split('\n').at(-1)!) as { code: string; error: string };
      expect(out.code).toBe('database_in_use');
      expect(out.error).toMatch(new RegExp(`in use by process ${a.pid} `));
    } finally {
      a.kill('SIGTERM');
      expect(await a.exited).toBe(0);
    }
    expect(existsSync(join(dir, 'pglite.lock'))).toBe(false);
  });

  it('survives a kill -9 at any point of a first start, then starts and works', async () => {
    const dir = dataDir();
    const cluster = join(dir, 'pglite');
    const building = () => readdirSync(dir).find((n) => n.startsWith('pglite.new-'));
    // Points of a first start, each seen on disk (a later point counts as having passed it).
    const points: [string, () => boolean][] = [
      ['the lock taken', () => existsSync(join(dir, 'pglite.lock'))],
      ['the cluster begun beside', () => Boolean(building()) || existsSync(cluster)],
      [
        'the cluster half written',
        () => {
          const b = building();
          return (b !== undefined && existsSync(join(dir, b, 'base', '5'))) || existsSync(cluster);
        },
      ],
      ['the cluster in place (PGlite opening it)', () => existsSync(join(cluster, 'PG_VERSION'))],
      // A file the empty cluster has not: the migrations' first table.
      ['the migrations begun', () => readdirSync(join(cluster, 'base', '5')).some((f) => Number(f) >= 16384)],
    ];
    for (const [, reached] of points) {
      const p = start(dir);
      await eventually(
        () => {
          try {
            return reached();
          } catch {
            return false;
          }
        },
        { intervalMs: 1, timeoutMs: 120_000 },
      );
      process.kill(p.pid, 'SIGKILL');
      expect(await p.exited).not.toBe(0);
    }
    // A lock left by a process that died, its pid now another live process's (this one's, with
    // another start time): taken over.
    writeFileSync(join(dir, 'pglite.lock'), `${process.pid} 1`);
    const last = start(dir);
    try {
      const [, url] = await last.waitFor(/"url":"(http[^"]+)"/);
      const health = await fetch(`${url}/api/health`);
      expect(health.status).toBe(200);
      noStack(last.stderr);
    } finally {
      last.kill('SIGTERM');
      expect(await last.exited).toBe(0);
    }
    expect(readdirSync(dir).sort()).toEqual(['jwt-secret', 'pglite'].filter((n) => existsSync(join(dir, n))));
  });
});
