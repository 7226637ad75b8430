// The CLI's API-key commands, the embedded database's lock, and the first administrator made by
// the server at start (cli.test.ts has the rest). The first command, the lock's refusal and the
// server run as an operator runs them, as processes of their own; the other commands run the same
// command line in this process (`run`), which skips loading the service again for each. On PGlite
// their databases are made already (the migrated template: a first migrate is cli.users.test.ts's).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../src/platform/db/lock.js';
import { migratedDataDir, spawnService } from './child-process.js';
import { cliDatabase } from './cli-run.js';
import { isPostgres } from './harness.js';

const { dataDir, schema, env, cli, run } = cliDatabase({ migrated: true });

// Each run opens the database and checks its migrations (on PostgreSQL the first makes them): a
// generous failsafe for a busy machine, not a timing claim.
describe('cli', { timeout: 180_000 }, () => {
  it('api-keys create, list and revoke', async () => {
    const r = await cli('api-keys', 'create', '--name', 'world platform', '--scopes', 'sync:read,sync:write');
    expect(r.code).toBe(0);
    expect(r.out.key).toMatch(/^apk_/);
    expect(r.out.scopes).toEqual(['sync:read', 'sync:write']);
    const bad = await run('api-keys', 'create', '--name', 'x', '--scopes', 'admin', '--verbose');
    expect(bad).toMatchObject({ code: 2, out: { code: 'usage' } });
    // The usage names every scope.
    expect(bad.stderr).toMatch(/scopes: sync:read, sync:write, chat-platform:command/);

    const nobody = await run('api-keys', 'create', '--name', 'editor', '--scopes', 'mcp', '--user', '999999');
    expect(nobody).toMatchObject({ code: 1, out: { code: 'validation_failed' } });

    const list = await run('api-keys', 'list');
    expect(list.code).toBe(0);
    const listed = list.out.apiKeys.find((k: any) => k.id === r.out.id);
    expect(listed).toMatchObject({ name: 'world platform', revokedAt: null });
    expect(JSON.stringify(list.out)).not.toContain(r.out.key);

    const revoked = await run('api-keys', 'revoke', '--id', String(r.out.id));
    expect(revoked).toMatchObject({ code: 0, out: { id: r.out.id, revoked: true } });
    const after = await run('api-keys', 'list');
    expect(after.out.apiKeys.find((k: any) => k.id === r.out.id).revokedAt).toEqual(expect.any(String));
    const unknown = await run('api-keys', 'revoke', '--id', '999999');
    expect(unknown).toMatchObject({ code: 1, out: { code: 'not_found' } });
  });

  it('refuses while a server holds the embedded database, saying what to do; runs beside servers on Postgres', async () => {
    // A live process (this test) holds the data directory's lock, as a running server would.
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    const lock = acquireDataDirLock(join(dataDir, 'pglite'));
    try {
      const r = await cli('migrate');
      if (isPostgres()) {
        expect(r.code).toBe(0);
        expect(r.out).toEqual({ applied: [] });
      } else {
        expect(r).toMatchObject({ code: 1, out: { code: 'database_in_use' } });
        expect(r.out.error).toMatch(/in use by process \d+/);
        expect(r.out.error).toMatch(/ADMIN_EMAIL and ADMIN_PASSWORD/);
        expect(r.out.error).not.toMatch(/use the admin API while it runs/);
      }
    } finally {
      lock.release();
    }
  });

  it('the first administrator from ADMIN_EMAIL/ADMIN_PASSWORD at start, while the server runs', async () => {
    const made = mkdtempSync(join(tmpdir(), 'ap-first-admin-'));
    const dir = isPostgres() ? made : await migratedDataDir(made);
    const serverEnv = {
      ...env,
      DATA_DIR: dir,
      PORT: '0',
      ADMIN_EMAIL: 'Boss@Example.test',
      ADMIN_PASSWORD: 'the first admin password',
      LOG_LEVEL: 'info',
      ...(isPostgres() ? { DB_SCHEMA: `${schema}_admin` } : {}),
    };
    const server = spawnService('main', [], serverEnv);
    try {
      const [, url] = await server.waitFor(/"url":"(http:\/\/[^"]+)".*"msg":"service ready"/);
      expect(server.stdout).toMatch(/"email":"Boss@Example.test".*"msg":"first administrator created"/);
      const login = await fetch(`${url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'boss@example.test', password: 'the first admin password' }),
      });
      expect(login.status).toBe(200);
      const { accessToken, user } = (await login.json()) as any;
      expect(user).toMatchObject({ role: 'cso', emailVerified: true });
      const users = await fetch(`${url}/api/admin/users`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(users.status).toBe(200);
    } finally {
      server.kill('SIGTERM');
      await server.exited;
      if (isPostgres()) {
        const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await c.connect();
        await c.query(`drop schema if exists "${schema}_admin" cascade`);
        await c.end();
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
