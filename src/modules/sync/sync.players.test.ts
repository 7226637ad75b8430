// Players from a game server: the players:write scope, one player per externalId, its session
// (a working access token of the client type, refresh and logout), the read, and a rate limit per
// key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let gameKey: string;
const newKey = async (scopes: ('players:write' | 'sync:write')[]) =>
  (await t.deps.services.auth.createApiKey('game', scopes, null)).key;
const userCount = async () =>
  Number(
    (
      await t.deps.db
        .selectFrom('users')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

beforeAll(async () => {
  t = await createTestApp({ PLAYERS_RATE_LIMIT: '4' });
  gameKey = await newKey(['players:write']);
});
afterAll(async () => t.close());

describe('POST /api/sync/players', () => {
  it('refuses a key without players:write, a player token and no key, creating nothing', async () => {
    const before = await userCount();
    const body = { externalId: 'steam:1' };
    const wrong = await t.api('POST', '/api/sync/players', { apiKey: await newKey(['sync:write']), body });
    expect(wrong.body).toMatchObject({ status: 403, code: 'forbidden', requiredScope: 'players:write' });
    expect((await t.api('POST', '/api/sync/players', { body })).status).toBe(401);
    const player = await createUser(t, 'public');
    expect((await t.api('POST', '/api/sync/players', { token: player.accessToken, body })).status).toBe(403);
    expect(await userCount()).toBe(before + 1); // the test's own player only
    expect((await t.api('GET', '/api/sync/players/steam:1', { apiKey: gameKey })).status).toBe(404);
  });

  it('the same externalId is one player; each call a working session of its client type', async () => {
    const first = await t.api('POST', '/api/sync/players', {
      apiKey: gameKey,
      body: { externalId: 'steam:42', name: 'Ada', clientType: 'vr' },
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      created: true,
      tokenType: 'Bearer',
      user: { name: 'Ada', email: null, role: 'carbon', accountType: 'public' },
    });
    const again = await t.api('POST', '/api/sync/players', {
      apiKey: gameKey,
      body: { externalId: 'steam:42' },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, user: { id: first.body.user.id, name: 'Ada' } });
    expect(again.body.refreshToken).not.toBe(first.body.refreshToken);

    const claims = t.deps.tokens.verify(first.body.accessToken);
    expect(claims).toMatchObject({ id: first.body.user.id, clientType: 'vr' });
    expect(t.deps.tokens.verify(again.body.accessToken).clientType).toBe('game_client');
    const profile = await t.api('GET', '/api/user/profile', { token: first.body.accessToken });
    expect(profile.body).toMatchObject({ id: first.body.user.id, name: 'Ada' });

    // Refresh and logout work as for any session; the other session lives on.
    const refreshed = await t.api('POST', '/api/auth/refresh', {
      body: { refreshToken: first.body.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    expect(t.deps.tokens.verify(refreshed.body.accessToken).clientType).toBe('vr');
    await t.api('POST', '/api/auth/logout', { body: { refreshToken: refreshed.body.refreshToken } });
    const ended = await t.api('GET', '/api/user/profile', { token: refreshed.body.accessToken });
    expect(ended.status).toBe(401);
    expect((await t.api('GET', '/api/user/profile', { token: again.body.accessToken })).status).toBe(200);

    // No password: the player cannot sign in with one.
    const read = await t.api('GET', '/api/sync/players/steam:42', { apiKey: gameKey });
    expect(read.body).toMatchObject({ id: first.body.user.id, name: 'Ada' });
  });

  it('many first sign-ins of one player at once make one player', async () => {
    const key = await newKey(['players:write']);
    const answers = await Promise.all(
      [0, 1, 2].map(() =>
        t.api('POST', '/api/sync/players', { apiKey: key, body: { externalId: 'epic:7', name: 'Bo' } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.user.id)).size).toBe(1);
  });

  it('renames a player given another name; refuses a bad body', async () => {
    const key = await newKey(['players:write']);
    await t.api('POST', '/api/sync/players', { apiKey: key, body: { externalId: 'gog:1', name: 'Cy' } });
    const renamed = await t.api('POST', '/api/sync/players', {
      apiKey: key,
      body: { externalId: 'gog:1', name: 'Cyd' },
    });
    expect(renamed.body.user.name).toBe('Cyd');
    const bad = await t.api('POST', '/api/sync/players', {
      apiKey: key,
      body: { externalId: 'a b', clientType: 'toaster' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('counts a rate-limit window per key', async () => {
    const [a, b] = [await newKey(['players:write']), await newKey(['players:write'])];
    const call = (key: string) =>
      t.api('POST', '/api/sync/players', { apiKey: key, body: { externalId: 'limit:1' } });
    for (let i = 0; i < 4; i++) expect((await call(a)).status).toBeLessThan(300);
    const limited = await call(a);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect((await call(b)).status).toBe(200);
  });
});
