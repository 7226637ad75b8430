// The operator CLI as an operator runs it: a child process, one JSON object on stdout.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../src/platform/db/lock.js';
import { isPostgres } from './harness.js';

const dataDir = mkdtempSync(join(tmpdir(), 'ap-cli-'));
const schema = `t_cli_${randomBytes(4).toString('hex')}`;
const env = {
  ...process.env,
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DATA_DIR: dataDir,
  JWT_SECRET: 'cli-test-secret-cli-test-secret-cli-test-secret',
  ...(isPostgres() ? { DB_SCHEMA: schema } : { DATABASE_URL: '' }),
};

function cli(...args: string[]): Promise<{ code: number; out: any; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { env, timeout: 60_000 },
      (err, stdout, stderr) => {
        let out: unknown;
        try {
          out = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
        } catch {
          out = stdout;
        }
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out, stderr });
      },
    );
  });
}

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  if (isPostgres()) {
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`drop schema if exists "${schema}" cascade`);
    await c.end();
  }
});

// Each test starts one or more child processes, each opening the embedded database and checking
// its migrations: a generous failsafe for a busy machine, not a timing claim.
describe('cli', { timeout: 120_000 }, () => {
  it('migrate applies the migrations once and prints { applied }', async () => {
    const first = await cli('migrate');
    expect(first.code).toBe(0);
    expect(first.out.applied).toContain('0001_identity');
    const again = await cli('migrate');
    expect(again.out).toEqual({ applied: [] });
  });

  it('users create makes the first admin, who can then sign in', async () => {
    const r = await cli(
      'users',
      'create',
      '--email',
      'Root@Example.test',
      '--password',
      'a strong password',
      '--role',
      'cso',
      '--account-type',
      'public',
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatchObject({ email: 'root@example.test', role: 'cso', accountType: 'public' });
    expect(typeof r.out.id).toBe('number');
  });

  it('refuses a role/account-type pair outside the spec and bad arguments, printing an error object', async () => {
    const bad = await cli(
      'users',
      'create',
      '--email',
      'x@example.test',
      '--password',
      'a strong password',
      '--role',
      'cso',
      '--account-type',
      'npc',
    );
    expect(bad.code).toBe(1);
    expect(bad.out.error).toMatch(/validation_failed|not allowed/);
    const missing = await cli('users', 'create', '--email', 'x@example.test');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/password/);
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/usage/);
  });

  it('api-keys create prints the key once', async () => {
    const r = await cli('api-keys', 'create', '--name', 'world platform', '--scopes', 'sync:read,sync:write');
    expect(r.code).toBe(0);
    expect(r.out.key).toMatch(/^apk_/);
    expect(r.out.scopes).toEqual(['sync:read', 'sync:write']);
    const bot = await cli('api-keys', 'create', '--name', 'bot', '--scopes', 'chat-platform:command');
    expect(bot.out.scopes).toEqual(['chat-platform:command']);
    const bad = await cli('api-keys', 'create', '--name', 'x', '--scopes', 'admin');
    expect(bad.code).toBe(1);
    // The usage names every scope.
    expect(bad.stderr).toMatch(/scopes: sync:read, sync:write, chat-platform:command/);
  });

  it('refuses while a server holds the embedded database; runs beside live servers on Postgres', async () => {
    // Simulate a running server: a live process (this test) holds the data directory's lock,
    // which only the embedded database uses.
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    const lock = acquireDataDirLock(join(dataDir, 'pglite'));
    try {
      const r = await cli('migrate');
      if (isPostgres()) {
        expect(r.code).toBe(0);
        expect(r.out).toEqual({ applied: [] });
      } else {
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/in use by process \d+/);
      }
    } finally {
      lock.release();
    }
  });
});
