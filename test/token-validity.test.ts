// An access token is judged by the account as it is now (ARCHITECTURE.md, "Token validity"): a
// deleted account or an ended session is signed out on every route and socket, a role change
// applies to live tokens, and on PostgreSQL another node hears of it at once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  eventually,
  isPostgres,
  type TestApp,
} from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ AUTH_RATE_LIMIT: '1000' });
});
afterEach(() => closeSockets());
afterAll(() => t.close());

/** Every kind of route the probe found open to a token without an account, with its body. */
async function expectSignedOutEverywhere(token: string) {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from('hello')], { type: 'text/plain' }), 'a.txt');
  const calls = [
    t.api('GET', '/api/user/profile', { token }),
    t.api('GET', '/api/memories', { token }),
    t.api('GET', '/api/conversations', { token }),
    t.api('POST', '/api/conversations', { token, body: { title: 'x' } }),
    t.api('GET', '/api/admin/users', { token }),
    fetch(`${t.url}/api/files/upload`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${token}` },
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code: string } })),
    fetch(`${t.url}/mcp`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code: string } })),
  ];
  for (const res of await Promise.all(calls)) {
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
  }
  for (const namespace of ['', '/observer'])
    await expect(connectSocket(t.url, { namespace, auth: { token } })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
}

describe('a token whose account is gone', () => {
  it("is refused everywhere once its NPC is deleted, and the NPC's open socket is closed", async () => {
    const cso = await createUser(t, 'cso');
    const npc = await t.api('POST', '/api/admin/data/npcs', {
      token: cso.accessToken,
      body: { name: 'Doomed' },
    });
    expect(npc.status).toBe(201);
    const row = await t.deps.services.users.get(npc.body.id);
    const { accessToken } = await t.deps.services.auth.issue(row, 'game_client');
    expect((await t.api('GET', '/api/memories', { token: accessToken })).status).toBe(200);
    const live = await connectSocket(t.url, { auth: { token: accessToken } });

    const del = await t.api('DELETE', `/api/admin/data/npcs/${npc.body.id}`, { token: cso.accessToken });
    expect(del.status).toBe(204);

    const closed = await live.next('chatError');
    expect(closed.payload.code).toBe('unauthenticated');
    await eventually(() => expect(live.socket.connected).toBe(false));
    await expectSignedOutEverywhere(accessToken);
  });

  it('is refused for a removed user, and for a well-signed token of an id that never existed', async () => {
    const user = await createUser(t, 'cso');
    await t.deps.services.users.remove(user.id);
    await expectSignedOutEverywhere(user.accessToken);

    const never = await t.deps.tokens.sign({
      id: 987_654_321,
      role: 'cso',
      name: 'ghost',
      accountType: 'public',
    });
    await expectSignedOutEverywhere(never);
  });

  it('is refused when its session is not in this database (a token of another database, same secret)', async () => {
    // Another database with the same JWT_SECRET: its id is an administrator here, its session is not.
    const cso = await createUser(t, 'cso');
    const row = await t.deps.services.users.get(cso.id);
    const elsewhere = await t.deps.tokens.sign(
      { id: row.id, role: row.role, name: row.name, accountType: row.account_type },
      600,
      '7f0c1e2a-5b1d-4c3e-9a8f-000000000000',
    );
    await expectSignedOutEverywhere(elsewhere);
    // Without a session at all, too; the account's own token still works.
    await expectSignedOutEverywhere(
      await t.deps.tokens.sign({ id: row.id, role: row.role, name: row.name, accountType: row.account_type }),
    );
    expect((await t.api('GET', '/api/admin/users', { token: cso.accessToken })).status).toBe(200);
  });
});

describe('account changes reach live tokens', () => {
  it('a demoted CSO loses admin access with the token it holds; a promoted user gains it', async () => {
    const boss = await createUser(t, 'cso');
    const other = await createUser(t, 'cso');
    expect((await t.api('GET', '/api/admin/users', { token: other.accessToken })).status).toBe(200);

    const demote = await t.api('PATCH', `/api/admin/users/${other.id}`, {
      token: boss.accessToken,
      body: { role: 'carbon' },
    });
    expect(demote.status).toBe(200);
    const after = await t.api('GET', '/api/admin/users', { token: other.accessToken });
    expect(after.status).toBe(403);
    expect(after.body.code).toBe('forbidden');
    // The profile is the account as it is, whatever the token says.
    expect((await t.api('GET', '/api/user/profile', { token: other.accessToken })).body.role).toBe('carbon');

    await t.api('PATCH', `/api/admin/users/${other.id}`, { token: boss.accessToken, body: { role: 'cso' } });
    expect((await t.api('GET', '/api/admin/users', { token: other.accessToken })).status).toBe(200);
  });

  it('logout ends the access tokens of its session only', async () => {
    const user = await createUser(t, 'public');
    const other = await t.api('POST', '/api/auth/login', {
      body: { email: user.email, password: user.password, clientType: 'mobile' },
    });
    const live = await connectSocket(t.url, { auth: { token: user.accessToken } });

    expect(
      (await t.api('POST', '/api/auth/logout', { body: { refreshToken: user.refreshToken } })).status,
    ).toBe(204);
    const res = await t.api('GET', '/api/user/profile', { token: user.accessToken });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
    expect((await live.next('chatError')).payload.code).toBe('unauthenticated');
    // The other session goes on.
    expect((await t.api('GET', '/api/user/profile', { token: other.body.accessToken })).status).toBe(200);
  });

  it('reuse of a spent refresh token ends every access token of that family', async () => {
    const user = await createUser(t, 'public');
    const rotated = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(rotated.status).toBe(200);
    expect((await t.api('GET', '/api/user/profile', { token: rotated.body.accessToken })).status).toBe(200);

    const reuse = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(reuse.body.code).toBe('refresh_token_reused');
    for (const token of [user.accessToken, rotated.body.accessToken as string])
      expect((await t.api('GET', '/api/user/profile', { token })).status).toBe(401);
  });
});

describe('API keys', () => {
  it('a revoked key is refused at once, though its answer was cached', async () => {
    const admin = await createUser(t, 'cso');
    const { id, key } = await t.deps.services.auth.createApiKey('game server', ['sync:read'], admin.id);
    expect((await t.api('GET', '/api/sync/universal-state', { apiKey: key })).status).toBe(200);
    expect((await t.api('GET', '/api/sync/universal-state', { apiKey: key })).status).toBe(200);
    const del = await t.api('DELETE', `/api/admin/api-keys/${id}`, { token: admin.accessToken });
    expect(del.status).toBe(204);
    const after = await t.api('GET', '/api/sync/universal-state', { apiKey: key });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('unauthenticated');
  });
});

describe('failed sign-ins', () => {
  it('counts parallel wrong passwords before checking them: at most the limit are checked', async () => {
    const user = await createUser(t, 'public');
    const attempts = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.api('POST', '/api/auth/login', { body: { email: user.email, password: 'wrong password!' } }),
      ),
    );
    const statuses = attempts.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10); // LOGIN_FAILURE_LIMIT
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    // Locked for this address even with the right password, until the window passes.
    const right = await t.api('POST', '/api/auth/login', {
      body: { email: user.email, password: user.password },
    });
    expect(right.status).toBe(429);
  });

  it('a success clears the count', async () => {
    const user = await createUser(t, 'public');
    const login = (password: string) =>
      t.api('POST', '/api/auth/login', { body: { email: user.email, password } });
    for (let i = 0; i < 9; i++) expect((await login('wrong password!')).status).toBe(401);
    expect((await login(user.password)).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await login('wrong password!')).status).toBe(401);
    expect((await login('wrong password!')).status).toBe(429);
  });
});

// PostgreSQL only: two nodes need a database both can open, and the embedded one serves one
// process. What a node hears there is its own process's change feed, which the tests above run
// on both databases; here a change must cross nodes through NOTIFY.
describe.runIf(isPostgres())('two nodes on one PostgreSQL', () => {
  let b: TestApp;
  beforeAll(async () => {
    // Node B caches an account for a minute (the most allowed): only the change notice can make it see a change.
    b = await createTestApp({ ACCOUNT_CACHE_MS: '60000' }, { sameDatabaseAs: t });
  });
  afterAll(() => b?.close());

  it('a change made on one node reaches the tokens and sockets held on the other', async () => {
    const boss = await createUser(t, 'cso');
    const other = await createUser(t, 'cso');
    // Node B has cached the account as a CSO.
    expect((await b.api('GET', '/api/admin/users', { token: other.accessToken })).status).toBe(200);

    await t.api('PATCH', `/api/admin/users/${other.id}`, {
      token: boss.accessToken,
      body: { role: 'carbon' },
    });
    await eventually(async () =>
      expect((await b.api('GET', '/api/admin/users', { token: other.accessToken })).status).toBe(403),
    );

    // A session ended on node A.
    const user = await createUser(t, 'public');
    expect((await b.api('GET', '/api/user/profile', { token: user.accessToken })).status).toBe(200);
    const live = await connectSocket(b.url, { auth: { token: user.accessToken } });
    await t.api('POST', '/api/auth/logout', { body: { refreshToken: user.refreshToken } });
    expect((await live.next('chatError')).payload.code).toBe('unauthenticated');
    await eventually(async () =>
      expect((await b.api('GET', '/api/user/profile', { token: user.accessToken })).status).toBe(401),
    );

    // An API key revoked on node A, its answer cached on node B.
    const { id: keyId, key } = await t.deps.services.auth.createApiKey('game server', ['sync:read'], null);
    expect((await b.api('GET', '/api/sync/universal-state', { apiKey: key })).status).toBe(200);
    await t.api('DELETE', `/api/admin/api-keys/${keyId}`, { token: boss.accessToken });
    await eventually(async () =>
      expect((await b.api('GET', '/api/sync/universal-state', { apiKey: key })).status).toBe(401),
    );

    // An account deleted on node A.
    const gone = await createUser(t, 'public');
    expect((await b.api('GET', '/api/memories', { token: gone.accessToken })).status).toBe(200);
    await t.deps.services.users.remove(gone.id);
    await eventually(async () =>
      expect((await b.api('GET', '/api/memories', { token: gone.accessToken })).status).toBe(401),
    );
  });

  it('a session begun on one node is signed in on the other, which had cached the account without it', async () => {
    const user = await createUser(t, 'public');
    // Node B has cached the account with its one session (B changed nothing, so it keeps what it reads).
    expect((await b.api('GET', '/api/user/profile', { token: user.accessToken })).status).toBe(200);
    const second = await t.api('POST', '/api/auth/login', {
      body: { email: user.email, password: user.password, clientType: 'game_client' },
    });
    await eventually(async () =>
      expect((await b.api('GET', '/api/user/profile', { token: second.body.accessToken })).status).toBe(200),
    );
    expect((await b.api('GET', '/api/user/profile', { token: user.accessToken })).status).toBe(200);
  });

  it("an owner change or a demotion on one node closes the other node's /observer sockets", async () => {
    const boss = await createUser(t, 'cso');
    const owner = await createUser(t, 'public');
    const admin = await createUser(t, 'cso');
    const obs = await t.api('POST', '/api/admin/instances', {
      token: boss.accessToken,
      body: { name: 'Two-node watch', level: 8, source: 'portal', userId: owner.id },
    });
    expect(obs.status).toBe(201);
    const exOwner = await connectSocket(b.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId: obs.body.id },
    });
    const exAdmin = await connectSocket(b.url, {
      namespace: '/observer',
      auth: { token: admin.accessToken, observerId: obs.body.id },
    });
    await t.api('PATCH', `/api/admin/instances/${obs.body.id}`, {
      token: boss.accessToken,
      body: { userId: boss.id },
    });
    expect((await exOwner.next('chatError')).payload.code).toBe('forbidden');
    await t.api('PATCH', `/api/admin/users/${admin.id}`, {
      token: boss.accessToken,
      body: { role: 'carbon' },
    });
    expect((await exAdmin.next('chatError')).payload.code).toBe('forbidden');
    await eventually(() => expect([exOwner, exAdmin].map((s) => s.socket.connected)).toEqual([false, false]));
  });
});
