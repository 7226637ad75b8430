// Users over HTTP: the caller's profile, the admin listing (search, filters, pages) and the admin
// change of role, account type and name, held to the spec's role/account-type table.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';

let t: TestApp;
let admin: TestUser;
let player: TestUser;

beforeAll(async () => {
  // One listed id: an account that is admin by ADMIN_USER_IDS, not by its role.
  t = await createTestApp({ ADMIN_USER_IDS: '900001' });
  admin = await createUser(t, 'cso');
  player = await createUser(t, 'public');
});
afterAll(() => t.close());

const asAdmin = (method: string, path: string, body?: unknown) =>
  t.api(method, path, { token: admin.accessToken, body });

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, type: `/problems/${code}` });
}

describe('GET /api/user/profile', () => {
  it("answers the caller's own profile", async () => {
    const dev = await createUser(t, 'developer', { name: 'Ada Dev' });
    const r = await t.api('GET', '/api/user/profile', { token: dev.accessToken });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: dev.id,
      email: dev.email,
      name: 'Ada Dev',
      role: 'silicon',
      accountType: 'developer',
      energy_coins: 0,
      emailVerified: false,
      createdAt: expect.any(String),
      isAdmin: true,
    });
    expect(Date.parse(r.body.createdAt)).not.toBeNaN();
    const own = await t.api('GET', '/api/user/profile', { token: player.accessToken });
    expect(own.body).toMatchObject({ id: player.id, role: 'carbon', accountType: 'public', isAdmin: false });
  });

  it('says isAdmin as the server decides it: cso, silicon + developer, or an id in ADMIN_USER_IDS', async () => {
    const isAdmin = async (token: string) =>
      (await t.api('GET', '/api/user/profile', { token })).body.isAdmin as boolean;
    expect(await isAdmin(admin.accessToken)).toBe(true);
    expect(await isAdmin((await createUser(t, 'core_primary')).accessToken)).toBe(false);
    expect(await isAdmin((await createUser(t, 'npc')).accessToken)).toBe(false);
    await sql`insert into users (id, email, name, role, account_type) overriding system value
      values (900001, 'listed-admin@example.test', 'Listed', 'carbon', 'public')`.execute(t.deps.db);
    const listed = await t.deps.services.auth.issue(await t.deps.services.users.get(900001), 'web_portal');
    const profile = await t.api('GET', '/api/user/profile', { token: listed.accessToken });
    expect(profile.body).toMatchObject({ id: 900001, role: 'carbon', accountType: 'public', isAdmin: true });
    // The flag is the admin routes' own rule: the listed carbon account is let in.
    expect((await t.api('GET', '/api/admin/users', { token: listed.accessToken })).status).toBe(200);
  });

  it('is 401 without a valid access token', async () => {
    expectProblem(await t.api('GET', '/api/user/profile'), 401, 'unauthenticated');
    expectProblem(await t.api('GET', '/api/user/profile', { token: 'not.a.jwt' }), 401, 'unauthenticated');
  });
});

describe('GET /api/admin/users', () => {
  // Users whose names carry this test run's marker, so that others' users do not count.
  const mark = `zq${randomBytes(4).toString('hex')}`;
  const made: Record<string, TestUser> = {};
  beforeAll(async () => {
    made.carbon = await createUser(t, 'public', { name: `${mark} Carla` });
    made.core = await createUser(t, 'core_primary', { name: `${mark} Corin` });
    made.dev = await createUser(t, 'developer', { name: `${mark} Devi` });
    made.npc = await createUser(t, 'npc', { name: `${mark} Nico` });
    made.cso = await createUser(t, 'cso', {
      name: 'Officer',
      email: `${mark.toUpperCase()}-officer@example.test`,
    });
  });

  const ids = async (query: string) => {
    const r = await asAdmin('GET', `/api/admin/users?${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { total: r.body.total, ids: r.body.users.map((u: { id: number }) => u.id) };
  };
  const all = () => ['carbon', 'core', 'dev', 'npc', 'cso'].map((k) => made[k]!.id);

  it('searches email and name, case-insensitively, and answers profiles in id order', async () => {
    const r = await asAdmin('GET', `/api/admin/users?q=${mark.toUpperCase()}`);
    expect(r.body).toMatchObject({ total: 5, limit: 50, offset: 0 });
    expect(r.body.users.map((u: { id: number }) => u.id)).toEqual(all());
    expect(r.body.users[2]).toEqual({
      id: made.dev!.id,
      email: made.dev!.email,
      name: `${mark} Devi`,
      role: 'silicon',
      accountType: 'developer',
      energy_coins: 0,
      emailVerified: false,
      createdAt: expect.any(String),
    });
    // The cso matches by email only, the others by name.
    expect(await ids(`q=${mark}-officer`)).toEqual({ total: 1, ids: [made.cso!.id] });
    expect(await ids(`q=${mark}%20nico`)).toEqual({ total: 1, ids: [made.npc!.id] });
    // LIKE's wildcards are searched for as themselves.
    expect(await ids(`q=${mark}%25`)).toEqual({ total: 0, ids: [] });
    expect(await ids(`q=${mark}_`)).toEqual({ total: 0, ids: [] });
  });

  it('filters by role and account type, alone and together', async () => {
    expect(await ids(`q=${mark}&role=carbon`)).toEqual({ total: 2, ids: [made.carbon!.id, made.core!.id] });
    expect(await ids(`q=${mark}&role=silicon`)).toEqual({ total: 2, ids: [made.dev!.id, made.npc!.id] });
    expect(await ids(`q=${mark}&role=cso`)).toEqual({ total: 1, ids: [made.cso!.id] });
    expect(await ids(`q=${mark}&accountType=public`)).toEqual({
      total: 2,
      ids: [made.carbon!.id, made.cso!.id],
    });
    expect(await ids(`q=${mark}&role=carbon&accountType=public`)).toEqual({
      total: 1,
      ids: [made.carbon!.id],
    });
    expect(await ids(`q=${mark}&role=silicon&accountType=public`)).toEqual({ total: 0, ids: [] });
  });

  it('pages with limit and offset; the total counts every match', async () => {
    const r = await asAdmin('GET', `/api/admin/users?q=${mark}&limit=2&offset=2`);
    expect(r.body).toMatchObject({ total: 5, limit: 2, offset: 2 });
    expect(await ids(`q=${mark}&limit=2`)).toEqual({ total: 5, ids: all().slice(0, 2) });
    expect(await ids(`q=${mark}&limit=2&offset=2`)).toEqual({ total: 5, ids: all().slice(2, 4) });
    expect(await ids(`q=${mark}&limit=2&offset=4`)).toEqual({ total: 5, ids: all().slice(4) });
    expect(await ids(`q=${mark}&offset=5`)).toEqual({ total: 5, ids: [] });
  });

  it('refuses bad queries with a validation problem', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=two',
      'offset=-1',
      'role=admin',
      'accountType=vip',
      `q=${'x'.repeat(201)}`,
    ]) {
      const r = await asAdmin('GET', `/api/admin/users?${query}`);
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors, query).not.toHaveLength(0);
    }
  });

  it('is for admins only', async () => {
    expectProblem(await t.api('GET', '/api/admin/users'), 401, 'unauthenticated');
    expectProblem(await t.api('GET', '/api/admin/users', { token: player.accessToken }), 403, 'forbidden');
    expectProblem(await t.api('GET', '/api/admin/users', { token: made.npc!.accessToken }), 403, 'forbidden');
    expect((await t.api('GET', '/api/admin/users', { token: made.dev!.accessToken })).status).toBe(200);
  });
});

describe('PATCH /api/admin/users/:id', () => {
  // spec: "Role and account type combinations", written out here as the spec states it.
  const ALLOWED: Record<Role, AccountType[]> = {
    carbon: ['public', 'core_primary'],
    silicon: ['developer', 'npc'],
    cso: ['public'],
  };
  const ROLES: Role[] = ['carbon', 'silicon', 'cso'];
  const ACCOUNT_TYPES: AccountType[] = ['public', 'core_primary', 'developer', 'npc'];
  const pairs = ROLES.flatMap((role) => ACCOUNT_TYPES.map((accountType) => [role, accountType] as const));

  const stored = async (id: number) => {
    const u = await t.deps.services.users.get(id);
    return { role: u.role, accountType: u.account_type, name: u.name };
  };

  it.each(pairs.filter(([role, type]) => ALLOWED[role].includes(type)))(
    'sets role %s with account type %s',
    async (role, accountType) => {
      const target = await createUser(t, 'public', { name: 'Before' });
      const r = await asAdmin('PATCH', `/api/admin/users/${target.id}`, { role, accountType });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ id: target.id, role, accountType, name: 'Before' });
      expect(await stored(target.id)).toEqual({ role, accountType, name: 'Before' });
    },
  );

  it.each(pairs.filter(([role, type]) => !ALLOWED[role].includes(type)))(
    'refuses role %s with account type %s and changes nothing',
    async (role, accountType) => {
      const target = await createUser(t, 'public', { name: 'Before' });
      const r = await asAdmin('PATCH', `/api/admin/users/${target.id}`, { role, accountType, name: 'After' });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors).toEqual([{ path: 'accountType', message: expect.stringContaining(accountType) }]);
      expect(await stored(target.id)).toEqual({ role: 'carbon', accountType: 'public', name: 'Before' });
    },
  );

  it('judges a change of one of the two against the other as stored', async () => {
    const core = await createUser(t, 'core_primary');
    // carbon/core_primary → cso would be cso/core_primary: refused.
    expectProblem(
      await asAdmin('PATCH', `/api/admin/users/${core.id}`, { role: 'cso' }),
      400,
      'validation_failed',
    );
    // carbon/core_primary → carbon/public: allowed; then → cso/public: allowed.
    expect((await asAdmin('PATCH', `/api/admin/users/${core.id}`, { accountType: 'public' })).status).toBe(
      200,
    );
    const promoted = await asAdmin('PATCH', `/api/admin/users/${core.id}`, { role: 'cso' });
    expect(promoted.body).toMatchObject({ role: 'cso', accountType: 'public' });
    // cso/public → cso/npc: refused; the stored pair stays.
    expectProblem(
      await asAdmin('PATCH', `/api/admin/users/${core.id}`, { accountType: 'npc' }),
      400,
      'validation_failed',
    );
    expect(await stored(core.id)).toMatchObject({ role: 'cso', accountType: 'public' });
  });

  it('renames (trimmed) without touching role or account type', async () => {
    const dev = await createUser(t, 'developer', { name: 'Old' });
    const r = await asAdmin('PATCH', `/api/admin/users/${dev.id}`, { name: '  New Name  ' });
    expect(r.body).toMatchObject({ name: 'New Name', role: 'silicon', accountType: 'developer' });
    expect(await stored(dev.id)).toEqual({ role: 'silicon', accountType: 'developer', name: 'New Name' });
  });

  it('refuses bad bodies and ids with a validation problem, and a missing user with 404', async () => {
    const target = await createUser(t, 'public', { name: 'Steady' });
    for (const body of [
      {},
      { role: 'admin' },
      { accountType: 'vip' },
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { email: 'new@example.test' },
      { role: 'carbon', energy_coins: 5 },
    ]) {
      const r = await asAdmin('PATCH', `/api/admin/users/${target.id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect(await stored(target.id)).toEqual({ role: 'carbon', accountType: 'public', name: 'Steady' });
    expectProblem(await asAdmin('PATCH', '/api/admin/users/abc', { name: 'x' }), 400, 'validation_failed');
    expectProblem(await asAdmin('PATCH', '/api/admin/users/0', { name: 'x' }), 400, 'validation_failed');
    expectProblem(await asAdmin('PATCH', '/api/admin/users/999999', { name: 'x' }), 404, 'not_found');
  });

  it('is for admins only', async () => {
    const target = await createUser(t);
    const body = { role: 'cso', accountType: 'public' };
    expectProblem(await t.api('PATCH', `/api/admin/users/${target.id}`, { body }), 401, 'unauthenticated');
    // Not even for oneself.
    expectProblem(
      await t.api('PATCH', `/api/admin/users/${target.id}`, { token: target.accessToken, body }),
      403,
      'forbidden',
    );
    expect(await stored(target.id)).toMatchObject({ role: 'carbon', accountType: 'public' });
  });
});

describe('the users table', () => {
  it('refuses a role and account type outside the spec table even if code slipped', async () => {
    const u = await createUser(t);
    await expect(
      t.deps.db
        .updateTable('users')
        .set({ role: 'cso', account_type: 'npc' })
        .where('id', '=', u.id)
        .execute(),
    ).rejects.toThrow(/users_role_account_type/);
  });
});
