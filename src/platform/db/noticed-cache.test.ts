// The noticed cache's change to every key and its loss of notices (the per-key rules are
// account-state.test.ts's, on the same class). The clock is injected.
import { describe, expect, it } from 'vitest';
import { keptNotices, noticeUnit } from '../../../test/notice-units.js';
import { LocalChangeFeed, type ChangeListener } from './notifications.js';
import { NoticedCache } from './noticed-cache.js';

function setup() {
  let now = 1_000_000;
  const rows = new Map<string, string>([
    ['a', 'A1'],
    ['b', 'B1'],
  ]);
  let loads = 0;
  let hold: Promise<void> | undefined;
  const feed = new LocalChangeFeed();
  const heard: ChangeListener[] = [];
  const listen = feed.listen.bind(feed);
  feed.listen = (channel, listener) => (heard.push(listener), listen(channel, listener));
  const opts = { channel: 'things', ttlMs: 10_000, keyOf: (p: string) => p, now: () => now };
  const load = async (key: string) => {
    loads++;
    const value = rows.get(key);
    await hold;
    return value;
  };
  return {
    cache: new NoticedCache(load, feed, opts),
    // Another node's cache on the same feed: what it announces, this one hears.
    other: new NoticedCache(load, feed, opts),
    feed,
    /** A unit of work whose notices the feed delivers once it committed (the embedded order). */
    unit: () => noticeUnit(feed.flush),
    rows,
    loads: () => loads,
    advance: (ms: number) => (now += ms),
    reconnected: () => heard.forEach((l) => l.onReset()),
    heardNotice: (payload: string) => heard.forEach((l) => l.onNotice(payload)),
    holdLoads: () => {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => ((hold = undefined), release());
    },
  };
}

describe('NoticedCache', () => {
  it('drops every key when another node announces a change to every key', async () => {
    const s = setup();
    expect([await s.cache.get('a'), await s.cache.get('b')]).toEqual(['A1', 'B1']);
    s.rows.set('a', 'A2');
    s.rows.set('b', 'B2');
    expect(await s.cache.get('a')).toBe('A1');
    const { uow, commit } = s.unit();
    s.other.changedIn(uow, 'every');
    await commit();
    expect([await s.cache.get('a'), await s.cache.get('b')]).toEqual(['A2', 'B2']);
    const loads = s.loads();
    await s.cache.get('a');
    expect(s.loads()).toBe(loads);
  });

  it('stores no key after this node changed every key until the notice is heard', async () => {
    const s = setup();
    const said: string[] = [];
    // PostgreSQL's order: the notice is heard some time after the commit.
    const { uow, commit } = noticeUnit(keptNotices(said));
    s.cache.changedIn(uow, 'every');
    await commit();
    await s.cache.get('a');
    await s.cache.get('b');
    await s.cache.get('a');
    expect(s.loads()).toBe(3);
    s.heardNotice(said[0]!);
    await s.cache.get('a');
    await s.cache.get('a');
    expect(s.loads()).toBe(4);
  });

  it('keeps no read that was in flight when notices may have been missed', async () => {
    const s = setup();
    const release = s.holdLoads();
    const inFlight = s.cache.get('a');
    s.rows.set('a', 'A2');
    s.reconnected();
    release();
    expect(await inFlight).toBe('A1');
    expect(await s.cache.get('a')).toBe('A2');
  });

  it('reads again a value it does not keep (a record not made yet), and keeps it once found', async () => {
    const s = setup();
    let loads = 0;
    const load = async (key: string) => (loads++, s.rows.get(key));
    const cache = new NoticedCache(load, s.feed, {
      channel: 'made',
      ttlMs: 10_000,
      keyOf: (p: string) => p,
      keeps: (v) => v !== undefined,
    });
    expect(await cache.get('c')).toBeUndefined();
    s.rows.set('c', 'C1');
    expect(await cache.get('c')).toBe('C1');
    s.rows.set('c', 'C2');
    expect(await cache.get('c')).toBe('C1');
    expect(loads).toBe(2);
  });
});
