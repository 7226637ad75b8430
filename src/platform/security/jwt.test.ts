// The access-token verifier against tokens built by jose (the library that signs ours): every
// claim check, the pinned algorithm and the header rules, without a server.
import { createHmac } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccessTokens, keyId } from './jwt.js';

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
function handmade(header: object, payload: object, signedWith = secret) {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc(header)}.${enc(payload)}`;
  return `${input}.${createHmac('sha256', signedWith).update(input).digest('base64url')}`;
}
const headerOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
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

  describe('key ids (a rotation of the secret)', () => {
    const previous = 'the-previous-secret-the-previous-secret-0123';
    const current = 'the-current-secret-the-current-secret-012345';
    const opts = { issuer: 'iss-a', audience: 'aud-a', ttlSeconds: 600 };
    const underPrevious = new AccessTokens({ ...opts, secret: previous });
    const rotated = () => new AccessTokens({ ...opts, secret: current, previousSecrets: [previous] });
    const outcome = (verifier: AccessTokens, token: string) => {
      try {
        verifier.verify(token);
        return 'ok';
      } catch (err) {
        return (err as { code?: string }).code;
      }
    };

    it('names the signing key in the header: an id derived from the secret, not the secret', async () => {
      const header = headerOf(await tokens.sign(user));
      expect(header).toMatchObject({ alg: 'HS256', typ: 'JWT', kid: keyId(secret) });
      expect(header.kid).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(keyId(previous)).not.toBe(keyId(current));
      expect(secret).not.toContain(String(header.kid));
    });

    it("verifies a previous key's token until it expires, and signs new ones under the current key", async () => {
      const verifier = rotated();
      expect(verifier.verify(await underPrevious.sign(user)).id).toBe(7);
      expect(headerOf(await verifier.sign(user)).kid).toBe(keyId(current));
      expect(outcome(verifier, await underPrevious.sign(user, -1))).toBe('token_expired');
      // The token signed under the current key is one the previous configuration does not know.
      expect(outcome(underPrevious, await verifier.sign(user))).toBe('unauthenticated');
    });

    it('refuses a removed key, an unknown kid, a kid naming another key and a kid that is no string', async () => {
      const old = await underPrevious.sign(user);
      const removed = new AccessTokens({ ...opts, secret: current });
      expect(outcome(removed, old)).toBe('unauthenticated');
      const verifier = rotated();
      const body = claims();
      expect(outcome(verifier, handmade({ alg: 'HS256', kid: keyId(previous) }, body, previous))).toBe('ok');
      expect(outcome(verifier, handmade({ alg: 'HS256', kid: 'no-such-key-0000' }, body, previous))).toBe(
        'unauthenticated',
      );
      // Signed by the previous key but naming the current one: only the named key is tried.
      expect(outcome(verifier, handmade({ alg: 'HS256', kid: keyId(current) }, body, previous))).toBe(
        'unauthenticated',
      );
      expect(outcome(verifier, handmade({ alg: 'HS256', kid: 7 }, body, previous))).toBe('unauthenticated');
    });

    it('checks a token without a kid (signed before key ids) against every accepted key', () => {
      const body = claims();
      expect(outcome(rotated(), handmade({ alg: 'HS256' }, body, previous))).toBe('ok');
      expect(outcome(rotated(), handmade({ alg: 'HS256' }, body, current))).toBe('ok');
      expect(
        outcome(rotated(), handmade({ alg: 'HS256' }, body, 'another-secret-another-secret-0123456')),
      ).toBe('unauthenticated');
    });
  });
});
