// The CLI as an operator runs it: a child process, one JSON object on stdout, errors once (JSON on
// stdout, text on stderr only with --verbose), and `chat` driven through stdin/stdout against a
// real server answering through the fake model server.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../src/platform/db/lock.js';
import { baseEnv, spawnTs } from './child-process.js';
import { startFakeModelServer } from './fake-model-server.js';
import { createTestApp, createUser, isPostgres } from './harness.js';

const dataDir = mkdtempSync(join(tmpdir(), 'ap-cli-'));
const schema = `t_cli_${randomBytes(4).toString('hex')}`;
const env: Record<string, string> = {
  ...baseEnv(),
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DATA_DIR: dataDir,
  JWT_SECRET: 'cli-test-secret-cli-test-secret-cli-test-secret',
  ...(isPostgres() ? { DATABASE_URL: process.env.DATABASE_URL!, DB_SCHEMA: schema } : {}),
};

interface Run {
  code: number;
  /** The last line of stdout as JSON (every command prints one object). */
  out: any;
  stdout: string;
  stderr: string;
}

async function cli(...args: string[]): Promise<Run> {
  const p = spawnTs('src/cli.ts', args, env);
  p.end();
  const code = await p.exited;
  let out: unknown;
  try {
    out = JSON.parse(p.stdout.trim().split('\n').at(-1) ?? 'null');
  } catch {
    out = undefined;
  }
  return { code, out, stdout: p.stdout, stderr: p.stderr };
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

const COMMANDS = [
  'migrate',
  'users create',
  'users list',
  'users set-role',
  'api-keys create',
  'api-keys list',
  'api-keys revoke',
  'chat',
];

// Each test starts one or more child processes, each opening the database and checking its
// migrations: a generous failsafe for a busy machine, not a timing claim.
describe('cli', { timeout: 180_000 }, () => {
  it('--help: the list of commands, and each command with its options (exit 0, no database)', async () => {
    const all = await cli('--help');
    expect(all.code).toBe(0);
    for (const c of COMMANDS) expect(all.stdout).toContain(`  ${c}`);
    // One after the other: a burst of processes would only crowd a small machine.
    const runs: Run[] = [];
    for (const args of [...COMMANDS.map((c) => [...c.split(' '), '--help']), ['users', '-h']])
      runs.push(await cli(...args));
    runs.slice(0, COMMANDS.length).forEach((r, i) => {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^npm run cli -- ${COMMANDS[i]}`));
      expect(r.stderr).toBe('');
    });
    // A group's help lists its commands.
    expect(runs.at(-1)!.stdout).toMatch(/users create[\s\S]*users list[\s\S]*users set-role/);
    expect(runs.at(-1)!.stdout).not.toContain('api-keys');
  });

  it('an error is printed once: JSON on stdout, text on stderr only with --verbose', async () => {
    const unknown = await cli('frobnicate');
    expect(unknown).toMatchObject({
      code: 2,
      out: { code: 'usage', error: 'unknown command: frobnicate (try --help)' },
    });
    expect(unknown.stdout.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toBe('');
    const verbose = await cli('frobnicate', '--verbose');
    expect(verbose.code).toBe(2);
    expect(verbose.out.code).toBe('usage');
    expect(verbose.stderr).toMatch(/^unknown command: frobnicate[\s\S]*usage: npm run cli --/);
    const badOption = await cli('users', 'list', '--colour', 'red');
    expect(badOption).toMatchObject({ code: 2, out: { code: 'usage' } });
    expect(badOption.out.error).toMatch(/--colour/);
  });

  it('migrate applies the migrations once and prints { applied }', async () => {
    const first = await cli('migrate');
    expect(first.code).toBe(0);
    expect(first.out.applied).toContain('0001_identity');
    const again = await cli('migrate');
    expect(again.out).toEqual({ applied: [] });
  });

  it('users create, list and set-role', async () => {
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
    const plain = await cli(
      'users',
      'create',
      '--email',
      'plain@example.test',
      '--password',
      'a strong password',
    );
    expect(plain.out).toMatchObject({ role: 'carbon', accountType: 'public' });

    const list = await cli('users', 'list', '--q', 'example.test');
    expect(list.code).toBe(0);
    expect(list.out).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(list.out.users.map((u: any) => u.email).sort()).toEqual([
      'plain@example.test',
      'root@example.test',
    ]);
    const csos = await cli('users', 'list', '--role', 'cso');
    expect(csos.out.users.map((u: any) => u.email)).toEqual(['root@example.test']);

    const promoted = await cli(
      'users',
      'set-role',
      '--id',
      String(plain.out.id),
      '--role',
      'silicon',
      '--account-type',
      'developer',
    );
    expect(promoted.code).toBe(0);
    expect(promoted.out).toMatchObject({ id: plain.out.id, role: 'silicon', accountType: 'developer' });
    // A pair outside the spec is refused with the service's code.
    const bad = await cli(
      'users',
      'set-role',
      '--id',
      String(plain.out.id),
      '--role',
      'cso',
      '--account-type',
      'npc',
    );
    expect(bad).toMatchObject({ code: 1, out: { code: 'validation_failed' } });
    expect(bad.out.error).toMatch(/npc is not allowed for role cso/);
    const missing = await cli('users', 'set-role', '--id', '999999', '--role', 'cso');
    expect(missing).toMatchObject({ code: 1, out: { code: 'not_found' } });
    const noRole = await cli('users', 'set-role', '--id', '1');
    expect(noRole).toMatchObject({ code: 2, out: { code: 'usage' } });
    expect(noRole.out.error).toMatch(/^--role/);
  });

  it('refuses a bad role/account-type pair and missing arguments', async () => {
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
    expect(bad.out.code).toBe('validation_failed');
    const missing = await cli('users', 'create', '--email', 'x@example.test');
    expect(missing).toMatchObject({ code: 2, out: { code: 'usage' } });
    expect(missing.out.error).toMatch(/--password/);
  });

  it('api-keys create, list and revoke', async () => {
    const r = await cli('api-keys', 'create', '--name', 'world platform', '--scopes', 'sync:read,sync:write');
    expect(r.code).toBe(0);
    expect(r.out.key).toMatch(/^apk_/);
    expect(r.out.scopes).toEqual(['sync:read', 'sync:write']);
    const bad = await cli('api-keys', 'create', '--name', 'x', '--scopes', 'admin', '--verbose');
    expect(bad).toMatchObject({ code: 2, out: { code: 'usage' } });
    // The usage names every scope.
    expect(bad.stderr).toMatch(/scopes: sync:read, sync:write, chat-platform:command/);

    const nobody = await cli('api-keys', 'create', '--name', 'editor', '--scopes', 'mcp', '--user', '999999');
    expect(nobody).toMatchObject({ code: 1, out: { code: 'validation_failed' } });

    const list = await cli('api-keys', 'list');
    expect(list.code).toBe(0);
    const listed = list.out.apiKeys.find((k: any) => k.id === r.out.id);
    expect(listed).toMatchObject({ name: 'world platform', revokedAt: null });
    expect(JSON.stringify(list.out)).not.toContain(r.out.key);

    const revoked = await cli('api-keys', 'revoke', '--id', String(r.out.id));
    expect(revoked).toMatchObject({ code: 0, out: { id: r.out.id, revoked: true } });
    const after = await cli('api-keys', 'list');
    expect(after.out.apiKeys.find((k: any) => k.id === r.out.id).revokedAt).toEqual(expect.any(String));
    const unknown = await cli('api-keys', 'revoke', '--id', '999999');
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
    const dir = mkdtempSync(join(tmpdir(), 'ap-first-admin-'));
    const serverEnv = {
      ...env,
      DATA_DIR: dir,
      PORT: '0',
      ADMIN_EMAIL: 'Boss@Example.test',
      ADMIN_PASSWORD: 'the first admin password',
      LOG_LEVEL: 'info',
      ...(isPostgres() ? { DB_SCHEMA: `${schema}_admin` } : {}),
    };
    const server = spawnTs('src/main.ts', [], serverEnv);
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

  it('chat: signs in, streams replies, lists the suggested replies and sends one by its number', async () => {
    const fake = await startFakeModelServer();
    const t = await createTestApp(fake.env());
    try {
      const user = await createUser(t, 'public', { name: 'Ada' });
      fake.replyChat({ text: 'Hello Ada! <choices>["Tell me a story","Goodbye"]</choices>' });
      const chat = spawnTs('src/cli.ts', ['chat', '--url', t.url, '--email', user.email], env);
      await chat.waitFor(/password: $/);
      chat.write(user.password);
      await chat.waitFor(/signed in as Ada/);
      await chat.waitFor(/you> $/);
      let from = chat.stdout.length;
      chat.write('hi there');
      await chat.waitFor(
        /assistant> Hello Ada!\n {2}1\) Tell me a story\n {2}2\) Goodbye\nyou> $/,
        'stdout',
        { from },
      );

      fake.replyChat({ text: 'Once upon a time.' });
      from = chat.stdout.length;
      chat.write('1');
      await chat.waitFor(/assistant> Once upon a time\.\nyou> $/, 'stdout', { from });
      // The number sent the suggested reply's text.
      const last = fake.chatRequests().at(-1)!.body.messages.at(-1);
      expect(JSON.stringify(last.content)).toContain('Tell me a story');

      chat.write('/quit');
      await chat.waitFor(/bye\n$/);
      expect(await chat.exited).toBe(0);
      expect(chat.stderr).toBe('');
    } finally {
      await t.close();
      await fake.close();
    }
  });

  it('chat: a wrong password and an unreachable server are one JSON error each', async () => {
    const t = await createTestApp();
    try {
      const user = await createUser(t);
      const wrong = await cli(
        'chat',
        '--url',
        t.url,
        '--email',
        user.email,
        '--password',
        'not the password',
      );
      expect(wrong).toMatchObject({ code: 1, out: { code: 'invalid_credentials' } });
    } finally {
      await t.close();
    }
    const down = await cli('chat', '--url', 'http://127.0.0.1:1', '--email', 'a@b.c', '--password', 'x');
    expect(down).toMatchObject({ code: 1, out: { code: 'server_unreachable' } });
  });
});
