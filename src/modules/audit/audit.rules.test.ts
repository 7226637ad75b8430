import { describe, expect, it } from 'vitest';
import {
  decodeLogCursor,
  encodeLogCursor,
  entryOf,
  pathOf,
  prefixPattern,
  shouldAudit,
} from './audit.rules.js';

describe('shouldAudit (writes mode)', () => {
  it.each([
    ['POST', '/api/assistant/memory', 201, true],
    ['PUT', '/api/protocol/protocols/x_v1', 409, true],
    ['DELETE', '/api/conversations/1', 204, true],
    ['PATCH', '/api/admin/users/1', 400, true],
    ['GET', '/api/user/profile', 200, false],
    ['GET', '/api/user/profile', 404, false],
    ['GET', '/api/user/profile', 401, true],
    ['GET', '/api/admin/users', 403, true],
    ['HEAD', '/api/user/profile', 500, true],
    ['OPTIONS', '/api/user/profile', 503, true],
    ['GET', '/api/health', 503, false],
    ['GET', '/api/health/', 500, false],
    ['GET', '/api/admin/health', 401, false],
    ['GET', '/metrics', 500, false],
    ['POST', '/api/health', 404, false],
  ] as const)('%s %s → %i: %s', (method, path, status, expected) => {
    expect(shouldAudit({ method, path, status }, 'writes')).toBe(expected);
  });
  it('all mode: reads too, never health or metrics', () => {
    expect(shouldAudit({ method: 'GET', path: '/api/user/profile', status: 200 }, 'all')).toBe(true);
    expect(shouldAudit({ method: 'GET', path: '/metrics', status: 200 }, 'all')).toBe(false);
  });
});

describe('entries', () => {
  it('keep the path without its query or fragment, and the actor kind', () => {
    expect(pathOf('/api/x?token=secret#frag')).toBe('/api/x');
    const at = new Date('2026-01-01T00:00:00Z');
    const base = {
      method: 'post',
      url: '/api/a?code=1',
      route: '/api/a',
      status: 201,
      problemCode: undefined,
      requestId: 'r1',
      ip: '127.0.0.1',
      durationMs: 1.23456,
    };
    expect(entryOf({ ...base, principal: null }, at)).toMatchObject({
      method: 'POST',
      path: '/api/a',
      actorKind: 'anonymous',
      actorUserId: null,
      apiKeyId: null,
      problemCode: null,
      durationMs: 1.235,
    });
    expect(entryOf({ ...base, principal: { kind: 'user', id: 7 } }, at)).toMatchObject({
      actorKind: 'user',
      actorUserId: 7,
    });
    expect(entryOf({ ...base, principal: { kind: 'apiKey', id: 3 } }, at)).toMatchObject({
      actorKind: 'api_key',
      apiKeyId: 3,
      actorUserId: null,
    });
  });
  it('cursors round-trip; anything else is refused', () => {
    const c = { at: '2026-01-01T00:00:00.123Z', id: 42 };
    expect(decodeLogCursor(encodeLogCursor(c))).toEqual(c);
    for (const bad of [
      'x',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["nope",1]').toString('base64url'),
    ])
      expect(decodeLogCursor(bad)).toBeNull();
  });
  it('escapes LIKE metacharacters in a path prefix', () => {
    expect(prefixPattern('/api/a_b%c\\')).toBe('/api/a\\_b\\%c\\\\%');
  });
});
