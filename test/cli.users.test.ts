// The CLI's database commands: migrate and the users commands, each printing one JSON object
// (cli.test.ts has the rest). A first migrate and a refusal run as an operator runs them, as
// processes of their own (their exit codes and output); the other commands run the same command
// line in this process (`run`), which skips loading the service again for each.
import { describe, expect, it } from 'vitest';
import { cliDatabase } from './cli-run.js';

const { cli, run } = cliDatabase();

// Each run opens the database and checks its migrations (the first makes them): a generous
// failsafe for a busy machine, not a timing claim.
describe('cli', { timeout: 180_000 }, () => {
  it('migrate applies the migrations once and prints { applied }', async () => {
    const first = await cli('migrate');
    expect(first.code).toBe(0);
    expect(first.out.applied).toContain('0001_identity');
    const again = await run('migrate');
    expect(again.out).toEqual({ applied: [] });
  });

  it('users create, list and set-role', async () => {
    const r = await run(
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
    const plain = await run(
      'users',
      'create',
      '--email',
      'plain@example.test',
      '--password',
      'a strong password',
    );
    expect(plain.out).toMatchObject({ role: 'carbon', accountType: 'public' });

    const list = await run('users', 'list', '--q', 'example.test');
    expect(list.code).toBe(0);
    expect(list.out).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(list.out.users.map((u: any) => u.email).sort()).toEqual([
      'plain@example.test',
      'root@example.test',
    ]);
    const csos = await run('users', 'list', '--role', 'cso');
    expect(csos.out.users.map((u: any) => u.email)).toEqual(['root@example.test']);

    const promoted = await run(
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
    const bad = await run(
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
    const missing = await run('users', 'set-role', '--id', '999999', '--role', 'cso');
    expect(missing).toMatchObject({ code: 1, out: { code: 'not_found' } });
    const noRole = await run('users', 'set-role', '--id', '1');
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
    const missing = await run('users', 'create', '--email', 'x@example.test');
    expect(missing).toMatchObject({ code: 2, out: { code: 'usage' } });
    expect(missing.out.error).toMatch(/--password/);
  });
});
