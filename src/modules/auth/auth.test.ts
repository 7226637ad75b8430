// Sign-in and sessions over real HTTP on a real database: every auth endpoint's bad input, happy
// path and failures; refresh rotation and reuse detection; JWT rejection; failed-login limiting.
import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const SECRET = new TextEncoder().encode('test-secret-test-secret-test-secret-0123456789');

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `/problems/${code}`, status, code });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  expect(JSON.stringify(res.body)).not.toMatch(/at .+\.ts:|select |insert |stack/i);
}

describe('GET /api/auth/providers', () => {
  it('is public and an empty list when no external login is configured', async () => {
    const res = await t.api('GET', '/api/auth/providers');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ providers: [] });
  });
});

describe('POST /api/auth/register', () => {
  it('creates a carbon/public user with 0 coins and answers 201 with the token response', async () => {
    const res = await t.api('POST', '/api/auth/register', {
      body: { email: 'New.User@Example.test', password: 'long enough pw', name: 'New' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600 });
    expect(res.body.user).toMatchObject({
      email: 'new.user@example.test',
      name: 'New',
      role: 'carbon',
      accountType: 'public',
      energy_coins: 0,
      emailVerified: false,
    });
    expect(typeof res.body.accessToken).toBe('string');
    expect(typeof res.body.refreshToken).toBe('string');
    const profile = await t.api('GET', '/api/user/profile', { token: res.body.accessToken });
    expect(profile.status).toBe(200);
    expect(profile.body.id).toBe(res.body.user.id);
  });

  it.each([
    ['missing email', { password: 'long enough pw' }, 'body.email'],
    ['bad email', { email: 'not-an-email', password: 'long enough pw' }, 'body.email'],
    ['short password', { email: 'a@b.test', password: 'short' }, 'body.password'],
    ['long password', { email: 'a@b.test', password: 'x'.repeat(257) }, 'body.password'],
    ['password not a string', { email: 'a@b.test', password: 12345678 }, 'body.password'],
    ['empty name', { email: 'a@b.test', password: 'long enough pw', name: '' }, 'body.name'],
  ])('rejects %s with 400 listing the field', async (_name, body, path) => {
    const res = await t.api('POST', '/api/auth/register', { body });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('lists every bad field at once', async () => {
    const res = await t.api('POST', '/api/auth/register', { body: { email: 'nope', password: 'x' } });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toHaveLength(2);
  });

  it('treats emails case-insensitively: a second registration is 409 conflict and stores nothing', async () => {
    await t.api('POST', '/api/auth/register', {
      body: { email: 'dup@example.test', password: 'long enough pw' },
    });
    const before = await t.deps.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const res = await t.api('POST', '/api/auth/register', {
      body: { email: 'DUP@example.TEST', password: 'another password' },
    });
    expectProblem(res, 409, 'conflict');
    const after = await t.deps.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('rejects a body that is not JSON', async () => {
    const res = await t.api('POST', '/api/auth/register', {
      body: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 400, 'validation_failed');
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await t.api('POST', '/api/auth/register', {
      body: { email: 'big@example.test', password: 'x'.repeat(2 * 1024 * 1024) },
    });
    expectProblem(res, 413, 'payload_too_large');
  });
});

describe('POST /api/auth/login and /api/auth/token', () => {
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    user = await createUser(t, 'public', { password: 'the right password' });
  });

  it('logs in with the right password (web_portal by default) and case-insensitive email', async () => {
    const res = await t.api('POST', '/api/auth/login', {
      body: { email: user.email.toUpperCase(), password: 'the right password' },
    });
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(user.id);
    const row = await t.deps.db
      .selectFrom('refresh_tokens')
      .select('client_type')
      .where('user_id', '=', user.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(row.client_type).toBe('web_portal');
  });

  it('issues native-client tokens at /api/auth/token and records the client type', async () => {
    const res = await t.api('POST', '/api/auth/token', {
      body: { email: user.email, password: 'the right password', clientType: 'game_client' },
    });
    expect(res.status).toBe(200);
    expect(res.body.tokenType).toBe('Bearer');
    const row = await t.deps.db
      .selectFrom('refresh_tokens')
      .select('client_type')
      .where('user_id', '=', user.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(row.client_type).toBe('game_client');
  });

  it('requires clientType at /api/auth/token and validates it everywhere', async () => {
    expectProblem(
      await t.api('POST', '/api/auth/token', { body: { email: user.email, password: 'the right password' } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.api('POST', '/api/auth/login', {
        body: { email: user.email, password: 'the right password', clientType: 'fax' },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.api('POST', '/api/auth/login', { body: { email: user.email } }),
      400,
      'validation_failed',
    );
  });

  it('gives the same 401 for a wrong password and an unknown email', async () => {
    const wrong = await t.api('POST', '/api/auth/login', {
      body: { email: user.email, password: 'the wrong password' },
    });
    const unknown = await t.api('POST', '/api/auth/login', {
      body: { email: 'nobody@example.test', password: 'the wrong password' },
    });
    expectProblem(wrong, 401, 'invalid_credentials');
    expectProblem(unknown, 401, 'invalid_credentials');
    expect(wrong.body).toEqual(unknown.body);
  });

  it('keeps several sessions per user and client type (one family per login)', async () => {
    const a = await t.api('POST', '/api/auth/login', {
      body: { email: user.email, password: 'the right password' },
    });
    const b = await t.api('POST', '/api/auth/login', {
      body: { email: user.email, password: 'the right password' },
    });
    expect(
      (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: a.body.refreshToken } })).status,
    ).toBe(200);
    expect(
      (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: b.body.refreshToken } })).status,
    ).toBe(200);
  });
});

describe('failed-login limit', () => {
  it('after 10 failures for an IP and email answers 429 even for the right password', async () => {
    const user = await createUser(t, 'public', { password: 'the right password' });
    for (let i = 0; i < 10; i++) {
      const r = await t.api('POST', '/api/auth/login', {
        body: { email: user.email, password: `wrong ${i} password` },
      });
      expect(r.status).toBe(401);
    }
    const blocked = await t.api('POST', '/api/auth/token', {
      body: { email: user.email, password: 'the right password', clientType: 'api' },
    });
    expectProblem(blocked, 429, 'rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another account from the same IP is not locked out by this one's failures.
    const other = await createUser(t, 'public', { password: 'the right password' });
    expect(
      (
        await t.api('POST', '/api/auth/login', {
          body: { email: other.email, password: 'the right password' },
        })
      ).status,
    ).toBe(200);
  });
});

describe('POST /api/auth/refresh and /api/auth/logout', () => {
  it('rotates: the new refresh token works, the old one is spent', async () => {
    const user = await createUser(t);
    const first = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(first.status).toBe(200);
    expect(first.body.refreshToken).not.toBe(user.refreshToken);
    const second = await t.api('POST', '/api/auth/refresh', {
      body: { refreshToken: first.body.refreshToken },
    });
    expect(second.status).toBe(200);
  });

  it('detects reuse: a spent token kills its whole family', async () => {
    const user = await createUser(t);
    const rotated = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expect(rotated.status).toBe(200);
    const reuse = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } });
    expectProblem(reuse, 401, 'refresh_token_reused');
    // The legitimate successor is dead too.
    const successor = await t.api('POST', '/api/auth/refresh', {
      body: { refreshToken: rotated.body.refreshToken },
    });
    expectProblem(successor, 401, 'unauthenticated');
  });

  it('lets only one of two concurrent refreshes of one token win', async () => {
    const user = await createUser(t);
    const results = await Promise.all(
      [1, 2].map(() => t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('rejects an unknown, malformed or expired refresh token', async () => {
    expectProblem(
      await t.api('POST', '/api/auth/refresh', { body: { refreshToken: 'not-a-token' } }),
      401,
      'unauthenticated',
    );
    expectProblem(await t.api('POST', '/api/auth/refresh', { body: {} }), 400, 'validation_failed');
    const user = await createUser(t);
    await t.deps.db
      .updateTable('refresh_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', user.id)
      .execute();
    expectProblem(
      await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } }),
      401,
      'unauthenticated',
    );
  });

  it('logout ends the session: 204, then the refresh token no longer works', async () => {
    const user = await createUser(t);
    const out = await t.api('POST', '/api/auth/logout', { body: { refreshToken: user.refreshToken } });
    expect(out.status).toBe(204);
    expectProblem(
      await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } }),
      401,
      'unauthenticated',
    );
    // Unknown tokens are accepted silently: logout is no oracle.
    expect((await t.api('POST', '/api/auth/logout', { body: { refreshToken: 'whatever' } })).status).toBe(
      204,
    );
    expectProblem(await t.api('POST', '/api/auth/logout', { body: {} }), 400, 'validation_failed');
  });
});

describe('access token checks', () => {
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    user = await createUser(t);
  });
  // With the session the user signed in with: a token names a session of this database.
  const claims = () => ({
    id: user.id,
    role: 'carbon',
    name: 'x',
    accountType: 'public',
    sid: decodeJwt(user.accessToken).sid,
  });
  const sign = (
    c: Record<string, unknown>,
    opts: { iss?: string; aud?: string; exp?: number; secret?: Uint8Array } = {},
  ) =>
    new SignJWT(c)
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(user.id))
      .setIssuedAt()
      .setJti(randomUUID())
      .setIssuer(opts.iss ?? 'assistant-platform')
      .setAudience(opts.aud ?? 'assistant-platform')
      .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 600)
      .sign(opts.secret ?? SECRET);

  it('accepts a well-formed token', async () => {
    expect((await t.api('GET', '/api/user/profile', { token: await sign(claims()) })).status).toBe(200);
  });

  it('rejects a tampered signature', async () => {
    const token = user.accessToken;
    const parts = token.split('.');
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString());
    payload.role = 'cso';
    const forged = [parts[0], Buffer.from(JSON.stringify(payload)).toString('base64url'), parts[2]].join('.');
    expectProblem(await t.api('GET', '/api/user/profile', { token: forged }), 401, 'unauthenticated');
    expectProblem(
      await t.api('GET', '/api/user/profile', {
        token: await sign(claims(), {
          secret: new TextEncoder().encode('another-secret-another-secret-another'),
        }),
      }),
      401,
      'unauthenticated',
    );
  });

  it('rejects alg: none', async () => {
    const none = new UnsecuredJWT(claims())
      .setSubject(String(user.id))
      .setIssuedAt()
      .setIssuer('assistant-platform')
      .setAudience('assistant-platform')
      .setExpirationTime('10m')
      .encode();
    expectProblem(await t.api('GET', '/api/user/profile', { token: none }), 401, 'unauthenticated');
  });

  it('rejects a wrong issuer or audience', async () => {
    expectProblem(
      await t.api('GET', '/api/user/profile', { token: await sign(claims(), { iss: 'someone-else' }) }),
      401,
      'unauthenticated',
    );
    expectProblem(
      await t.api('GET', '/api/user/profile', { token: await sign(claims(), { aud: 'someone-else' }) }),
      401,
      'unauthenticated',
    );
  });

  it('answers token_expired for an expired token', async () => {
    const expired = await sign(claims(), { exp: Math.floor(Date.now() / 1000) - 10 });
    expectProblem(await t.api('GET', '/api/user/profile', { token: expired }), 401, 'token_expired');
  });

  it('rejects a refresh token used as an access token, and a malformed header', async () => {
    expectProblem(
      await t.api('GET', '/api/user/profile', { token: user.refreshToken }),
      401,
      'unauthenticated',
    );
    expectProblem(
      await t.api('GET', '/api/user/profile', { headers: { authorization: 'Basic abc' } }),
      401,
      'unauthenticated',
    );
  });
});

describe('API keys (admin)', () => {
  it('creates (shown once, stored hashed), lists and revokes', async () => {
    const admin = await createUser(t, 'cso');
    const created = await t.api('POST', '/api/admin/api-keys', {
      token: admin.accessToken,
      body: { name: 'world', scopes: ['sync:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'world', scopes: ['sync:read'] });
    expect(created.body.key).toMatch(/^apk_/);
    const stored = await t.deps.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(stored.key_hash).not.toContain(created.body.key);
    const list = await t.api('GET', '/api/admin/api-keys', { token: admin.accessToken });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    expect(
      (await t.api('DELETE', `/api/admin/api-keys/${created.body.id}`, { token: admin.accessToken })).status,
    ).toBe(204);
    expect(await t.deps.services.auth.verifyApiKey(created.body.key)).toBeNull();
    expectProblem(
      await t.api('DELETE', '/api/admin/api-keys/999999', { token: admin.accessToken }),
      404,
      'not_found',
    );
  });

  it('validates the body', async () => {
    const admin = await createUser(t, 'developer');
    expectProblem(
      await t.api('POST', '/api/admin/api-keys', {
        token: admin.accessToken,
        body: { name: 'x', scopes: ['root'] },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.api('POST', '/api/admin/api-keys', {
        token: admin.accessToken,
        body: { name: '', scopes: [] },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.api('DELETE', '/api/admin/api-keys/abc', { token: admin.accessToken }),
      400,
      'validation_failed',
    );
  });
});
