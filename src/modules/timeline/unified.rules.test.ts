// The unified timeline's pure rules: the page cursor and what ties it to its query.
import { describe, expect, it } from 'vitest';
import {
  decodeCursor,
  encodeCursor,
  queryIdentity,
  type TimelineFilter,
  type TimelineOrder,
} from './unified.rules.js';

describe('queryIdentity', () => {
  it('ignores the order of list values and how an instant is written', () => {
    expect(queryIdentity(1, { eventTypes: ['a', 'b'], from: '2026-01-01T02:00:00+02:00' }, 'desc')).toBe(
      queryIdentity(1, { eventTypes: ['b', 'a', 'a'], from: '2026-01-01T00:00:00Z' }, 'desc'),
    );
  });
  it.each([
    [2, {}, 'desc'],
    [1, {}, 'asc'],
    [1, { eventTypes: ['a'] }, 'desc'],
    [1, { sources: ['a'] }, 'desc'],
    [1, { personaIds: [1] }, 'desc'],
    [1, { instanceId: 1 }, 'desc'],
    [1, { userId: 1 }, 'desc'],
    [1, { q: 'a' }, 'desc'],
    [1, { from: '2026-01-01T00:00:00Z' }, 'desc'],
    [1, { to: '2026-01-01T00:00:00Z' }, 'desc'],
  ] as [number, TimelineFilter, TimelineOrder][])(
    'differs for observer %s, %j, %s',
    (observerId, filter, order) => {
      expect(queryIdentity(observerId, filter, order)).not.toBe(queryIdentity(1, {}, 'desc'));
    },
  );
});

describe('cursor', () => {
  const identity = queryIdentity(1, { eventTypes: ['a'] }, 'desc');
  const key = { at: '2026-01-01T10:00:00.123456Z', id: 42 };

  it('round-trips with its own query', () => {
    expect(decodeCursor(encodeCursor(key, identity), identity)).toEqual({ ok: true, key });
  });
  it('is refused by another query', () => {
    const other = queryIdentity(1, { eventTypes: ['b'] }, 'desc');
    expect(decodeCursor(encodeCursor(key, identity), other)).toMatchObject({ ok: false });
  });
  it.each([
    'garbage',
    '',
    Buffer.from('{"a":"2026-01-01","i":1,"q":"x"}').toString('base64url'),
    Buffer.from('{"a":"2026-01-01T10:00:00.123456Z","i":-1,"q":"x"}').toString('base64url'),
    Buffer.from('{"a":"2026-01-01T10:00:00.123456Z","i":1.5,"q":"x"}').toString('base64url'),
    Buffer.from('null').toString('base64url'),
  ])('refuses %j', (cursor) => expect(decodeCursor(cursor, identity)).toMatchObject({ ok: false }));
});
