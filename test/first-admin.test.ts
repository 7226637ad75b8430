// ADMIN_EMAIL/ADMIN_PASSWORD: the first administrator is made at start while no CSO exists, owns
// the root observer, and is never made over another account or beside an existing CSO.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp } from './harness.js';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});

describe('the first administrator', () => {
  it('is made at start, signs in as a CSO and owns the root observer; a second one is not made', async () => {
    const t = await createTestApp({
      ADMIN_EMAIL: 'first@example.test',
      ADMIN_PASSWORD: 'first admin password',
    });
    apps.push(t);
    const login = await t.api('POST', '/api/auth/login', {
      body: { email: 'first@example.test', password: 'first admin password' },
    });
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ role: 'cso', accountType: 'public', emailVerified: true });
    const root = await t.deps.db
      .selectFrom('instances')
      .select('user_id')
      .where('is_root', '=', true)
      .executeTakeFirstOrThrow();
    expect(root.user_id).toBe(login.body.user.id);

    const users = t.deps.services.users;
    expect(
      await users.ensureFirstAdmin({ email: 'first@example.test', password: 'first admin password' }),
    ).toBe('exists');
    expect(await users.ensureFirstAdmin({ email: 'second@example.test', password: 'another password' })).toBe(
      'exists',
    );
    expect(await users.findByEmail('second@example.test')).toBeUndefined();
  });

  it('never promotes or takes over an account that already has the address', async () => {
    const t = await createTestApp();
    apps.push(t);
    const someone = await createUser(t, 'public', { email: 'taken@example.test' });
    const users = t.deps.services.users;
    expect(
      await users.ensureFirstAdmin({ email: 'taken@example.test', password: 'first admin password' }),
    ).toBe('email_taken');
    expect(await users.firstCsoId()).toBeUndefined();
    expect((await users.get(someone.id)).role).toBe('carbon');
  });
});
