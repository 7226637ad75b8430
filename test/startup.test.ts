// `npm start` as an operator meets it: the real process, its output and its exit code, for each
// start-up failure an operator can fix, and for the two log formats.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../src/platform/db/lock.js';
import { baseEnv, migratedDataDir, spawnService } from './child-process.js';
import { isPostgres } from './harness.js';

const dirs: string[] = [];
function dataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'ap-start-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SECRET = 'startup-test-secret-startup-test-secret-0123';

function start(env: Record<string, string>) {
  return spawnService('main', [], {
    ...baseEnv(),
    NODE_ENV: 'test',
    JWT_SECRET: SECRET,
    DATA_DIR: dataDir(),
    DATABASE_URL: 'memory://',
    HOST: '127.0.0.1',
    PORT: '0',
    ...env,
  });
}

function listening(): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

// A test starts the service, or more than once: a generous failsafe for a busy machine, not a
// timing claim.
describe('start-up', { timeout: 120_000 }, () => {
  it('reports every bad variable at once, each with the value given (secrets by length)', async () => {
    const p = start({
      PORT: 'abc',
      JWT_SECRET: 'short',
      JWT_PREVIOUS_SECRETS: `${'p'.repeat(40)},short`,
      LOG_LEVEL: 'loud',
      SERVICES: 'api,mail',
      MODEL_BASE_URL: 'not a url',
      DATABASE_URL: 'mysql://root:hunter2@db/x',
    });
    expect(await p.exited).toBe(1);
    const lines = p.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^invalid configuration/);
    expect(lines.slice(1).map((l) => l.trim())).toEqual([
      'PORT="abc": must be a number',
      'LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent',
      'MODEL_BASE_URL="not a url": must be a URL',
      'SERVICES="api,mail": must be one of api, worker',
      'JWT_SECRET (5 characters): must be at least 32 bytes',
      'JWT_PREVIOUS_SECRETS (46 characters): each must be at least 32 bytes',
      'DATABASE_URL="mysql://root:***@db/x": must be a postgres:// URL (or memory:// for a throwaway embedded database)',
    ]);
    expect(p.stderr).not.toContain('hunter2');
    expect(p.stderr).not.toContain('short');
    expect(p.stderr).not.toContain('pppp');
    expect(p.stdout).toBe('');
  });

  it('a busy port: one line saying what to do', async () => {
    const busy = await listening();
    try {
      const port = (busy.address() as AddressInfo).port;
      const p = start({ PORT: String(port) });
      expect(await p.exited).toBe(1);
      expect(p.stderr).toBe(
        `cannot start: port ${port} on 127.0.0.1 is already in use (another server?): stop it, or set PORT to a free port\n`,
      );
    } finally {
      busy.close();
    }
  });

  it('an unreachable database: one line saying what to do, the password hidden', async () => {
    // A port that was free a moment ago: nothing answers there.
    const s = await listening();
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const p = start({ DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/assistant` });
    expect(await p.exited).toBe(1);
    expect(p.stderr).toBe(
      `cannot start: cannot reach the database at postgres://app:***@127.0.0.1:${port}/assistant ` +
        `(connection refused): start PostgreSQL there or correct DATABASE_URL (unset it to use the embedded database)\n`,
    );
  });

  it('a DATA_DIR in use by another process: one line saying what to do', async () => {
    const dir = dataDir();
    mkdirSync(join(dir, 'pglite'), { recursive: true });
    // A live process (this test) holds the lock, as a running server would.
    const lock = acquireDataDirLock(join(dir, 'pglite'));
    try {
      const p = start({ DATA_DIR: dir, DATABASE_URL: '' });
      expect(await p.exited).toBe(1);
      expect(p.stderr).toBe(
        `cannot start: the embedded database in ${join(dir, 'pglite')} is in use by process ${process.pid} ` +
          `(another server on this DATA_DIR?): stop that process, or set DATA_DIR to another directory\n`,
      );
      noStack(p.stderr);
    } finally {
      lock.release();
    }
  });

  it('development logs are readable lines; production logs are JSON lines', async () => {
    // Both on one data directory whose database is made already (the first start is
    // data-dir.test.ts's): the migrated template on the embedded lane; on the Postgres lane, which
    // has no template, the first of the two makes it.
    const dir = isPostgres() ? dataDir() : await migratedDataDir(dataDir());
    const dev = start({ NODE_ENV: 'development', JWT_SECRET: '', DATA_DIR: dir, DATABASE_URL: '' });
    await dev.waitFor(/service ready/);
    const readyLine = dev.stdout.split('\n').find((l) => l.includes('service ready'))!;
    expect(() => JSON.parse(readyLine) as unknown).toThrow();
    expect(readyLine).toMatch(/INFO.*service ready/);
    dev.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
    noStack(dev.stderr);

    const prod = start({ NODE_ENV: 'production', DATA_DIR: dir, DATABASE_URL: '' });
    await prod.waitFor(/service ready/);
    const json = prod.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; level: number });
    expect(json.find((r) => r.msg === 'service ready')).toMatchObject({ level: 30 });
    prod.kill('SIGTERM');
    expect(await prod.exited).toBe(0);
  });
});
