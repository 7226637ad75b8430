// CORS_ORIGINS on REST and Socket.IO: a listed origin's preflight and requests pass, another
// origin's get no access-control-allow-origin, and a socket handshake from it is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { originAllowed } from './cors.js';

const GAME = 'https://game.example';
const OTHER = 'https://other.example';

describe('originAllowed', () => {
  const publicUrl = 'https://api.example';
  it.each([
    [undefined, 'api.example', [], true],
    ['https://api.example', 'api.example', [], true],
    ['http://127.0.0.1:3000', '127.0.0.1:3000', [], true],
    [GAME, 'api.example', [], false],
    [GAME, 'api.example', [GAME], true],
    [OTHER, 'api.example', [GAME], false],
    ['null', 'api.example', [GAME], false],
    ['https://api.example.evil.test', 'api.example', [], false],
  ] as const)('%s at %s with %j: %s', (origin, host, allowed, expected) =>
    expect(originAllowed(origin, host, allowed, publicUrl)).toBe(expected),
  );
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ CORS_ORIGINS: `${GAME}, https://studio.example` });
});
afterAll(async () => t.close());

const preflight = (path: string, origin: string) =>
  fetch(t.url + path, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });

describe('CORS on REST', () => {
  it('answers a listed origin’s preflight without a token, and no other’s', async () => {
    const ok = await preflight('/api/auth/login', GAME);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(GAME);
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    expect(ok.headers.get('access-control-allow-headers')).toContain('authorization');
    const other = await preflight('/api/auth/login', OTHER);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('marks a listed origin’s answers readable, errors included', async () => {
    const ok = await t.api('GET', '/api/health', { headers: { origin: GAME } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(GAME);
    expect(ok.headers.get('access-control-expose-headers')).toContain('retry-after');
    const denied = await t.api('GET', '/api/user/profile', { headers: { origin: GAME } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(GAME);
    const other = await t.api('GET', '/api/health', { headers: { origin: OTHER } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS on Socket.IO', () => {
  const polling = '/socket.io/?EIO=4&transport=polling';
  it('answers a listed origin’s preflight and handshake, and refuses another’s', async () => {
    const ok = await preflight(polling, GAME);
    expect(ok.headers.get('access-control-allow-origin')).toBe(GAME);
    const other = await preflight(polling, OTHER);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const handshake = await fetch(t.url + polling, { headers: { origin: GAME } });
    expect(handshake.status).toBe(200);
    expect(handshake.headers.get('access-control-allow-origin')).toBe(GAME);
    expect(await handshake.text()).toContain('"sid"');
    const refused = await fetch(t.url + polling, { headers: { origin: OTHER } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    // The service's own pages (the web console) connect as before.
    expect((await fetch(t.url + polling, { headers: { origin: t.url } })).status).toBe(200);
  });
});
