// The access-token verifier against tokens built by jose (the library that signs ours): every
// claim check, the pinned algorithm and the header rules, without a server.
import { createHmac } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccessTokens } from './jwt.js';

const secret = 'unit-test-secret-unit-test-secret-0123';
const tokens = new AccessTokens({ secret, issuer: 'iss-a', audience: 'aud-a', ttlSeconds: 600 });
const key = new TextEncoder().encode(secret);
const now = () => Math.floor(Date.now() / 1000);
const user = { id: 7, role: 'carbon', name: 'Ann', accountType: 'public' } as const;

function sign(payload: JWTPayload, header: Record<string, unknown> = {}, alg = 'HS256') {
  return new SignJWT(payload)
    .setProtectedHeader({ alg, typ: 'JWT', ...header })
    .sign(alg === 'HS512' ? new Uint8Array([...key, ...key]) : key);
}
const claims = (over: JWTPayload = {}): JWTPayload => ({
  ...user,
  sub: '7',
  iat: now(),
  exp: now() + 60,
  iss: 'iss-a',
  aud: 'aud-a',
  jti: 'j-1',
  ...over,
});
/** A token signed by hand (for headers jose refuses to write). */
function handmade(header: object, payload: object) {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc(header)}.${enc(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
async function code(token: string) {
  try {
    tokens.verify(token);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe('AccessTokens.verify', () => {
  it('accepts the tokens it signs and returns their claims', async () => {
    const token = await tokens.sign(user);
    expect(tokens.verify(token)).toMatchObject({ id: 7, role: 'carbon', name: 'Ann' });
  });

  it.each([
    ['another issuer', claims({ iss: 'iss-b' })],
    ['another audience', claims({ aud: 'aud-b' })],
    ['an audience list without ours', claims({ aud: ['aud-b', 'aud-c'] })],
    ['no jti', claims({ jti: undefined })],
    ['no iat', claims({ iat: undefined })],
    ['no sub', claims({ sub: undefined })],
    ['sub not the id', claims({ sub: '8' })],
    ['a role that does not exist', claims({ role: 'root' })],
    ['a client type that does not exist', claims({ clientType: 'fax' })],
    ['an id that is not an integer', claims({ id: 7.5, sub: '7.5' })],
    ['a not-before in the future', claims({ nbf: now() + 60 })],
  ])('refuses %s as unauthenticated', async (_what, payload) => {
    expect(await code(await sign(payload))).toBe('unauthenticated');
  });

  it("carries the session's client type when signed with one", async () => {
    expect(tokens.verify(await tokens.sign({ ...user, clientType: 'game_client' })).clientType).toBe(
      'game_client',
    );
    expect(tokens.verify(await tokens.sign(user)).clientType).toBeUndefined();
  });

  it('accepts an audience list that holds ours, and a past not-before', async () => {
    expect(await code(await sign(claims({ aud: ['x', 'aud-a'], nbf: now() - 5 })))).toBe('ok');
  });

  it('answers token_expired once exp has come, not before', async () => {
    expect(await code(await sign(claims({ exp: now() })))).toBe('token_expired');
    expect(await code(await sign(claims({ exp: now() + 30 })))).toBe('ok');
  });

  it('pins HS256: another algorithm, alg none, a critical extension or a bad signature is refused', async () => {
    expect(await code(await sign(claims(), {}, 'HS512'))).toBe('unauthenticated');
    expect(await code(handmade({ alg: 'none' }, claims()).replace(/[^.]+$/, ''))).toBe('unauthenticated');
    expect(await code(handmade({ alg: 'HS256', crit: ['exp'] }, claims()))).toBe('unauthenticated');
    expect(await code(handmade({ alg: 'HS256', b64: false }, claims()))).toBe('unauthenticated');
    expect(await code(handmade({ alg: 'HS256' }, claims()))).toBe('ok');
    const good = handmade({ alg: 'HS256' }, claims());
    expect(await code(good.slice(0, -2) + (good.endsWith('AA') ? 'AB' : 'AA'))).toBe('unauthenticated');
  });

  it('refuses what is not a JWS: parts missing, not base64url, not JSON objects', async () => {
    for (const bad of ['', 'a.b', 'a.b.c.d', '***.***.***', handmade({ alg: 'HS256' }, [1, 2])])
      expect(await code(bad)).toBe('unauthenticated');
  });

  describe('the cache of verified tokens', () => {
    afterEach(() => vi.useRealTimers());

    it('still answers token_expired for a cached token once its exp has come', async () => {
      const fresh = new AccessTokens({ secret, issuer: 'iss-a', audience: 'aud-a', ttlSeconds: 600 });
      vi.useFakeTimers({ toFake: ['Date'] });
      const token = await sign(claims({ exp: now() + 30 }));
      expect(fresh.verify(token).id).toBe(7);
      expect(fresh.verify(token).id).toBe(7); // from the cache
      vi.setSystemTime(Date.now() + 30_000);
      expect(() => fresh.verify(token)).toThrow(expect.objectContaining({ code: 'token_expired' }));
      expect(() => fresh.verify(token)).toThrow(expect.objectContaining({ code: 'token_expired' }));
    });

    it('does not lend a cached token to one that differs by a byte', async () => {
      const good = handmade({ alg: 'HS256' }, claims());
      expect(await code(good)).toBe('ok');
      expect(await code(good.slice(0, -2) + (good.endsWith('AA') ? 'AB' : 'AA'))).toBe('unauthenticated');
      expect(await code(good + 'A')).toBe('unauthenticated');
      expect(await code(good)).toBe('ok');
    });
  });
});
