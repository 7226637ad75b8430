// The per-node account cache: how long an entry is trusted, what a change notice does, and that a
// read racing a change never stores the old state. The clock is injected.
import { describe, expect, it } from 'vitest';
import { keptNotices, noticeUnit } from '../../../test/notice-units.js';
import { LocalChangeFeed, type ChangeListener } from '../db/notifications.js';
import { AccountStates, type AccountState } from './account-state.js';

function setup(opts: { ttlMs?: number; maxEntries?: number } = {}) {
  let now = 1_000_000;
  const rows = new Map<number, AccountState>();
  let loads = 0;
  const pending: (() => void)[] = [];
  let gate = false;
  // The embedded database's feed, plus what the PostgreSQL one does when its LISTEN connection
  // comes back after a loss (notices may have been missed).
  const feed = new LocalChangeFeed();
  const heard: ChangeListener[] = [];
  const listen = feed.listen.bind(feed);
  feed.listen = (channel, listener) => (heard.push(listener), listen(channel, listener));
  const states = new AccountStates(
    async (id) => {
      loads++;
      const snapshot = rows.get(id);
      if (gate) await new Promise<void>((r) => pending.push(r));
      return snapshot;
    },
    feed,
    { ttlMs: opts.ttlMs ?? 2000, maxEntries: opts.maxEntries, now: () => now },
  );
  return {
    states,
    feed,
    /** A unit of work whose notices the feed delivers once it committed (the embedded order). */
    unit: () => noticeUnit(feed.flush),
    rows,
    loads: () => loads,
    advance: (ms: number) => (now += ms),
    reconnected: () => heard.forEach((l) => l.onReset()),
    /** A notice heard, as the listening connection delivers it. */
    heardNotice: (payload: string) => heard.forEach((l) => l.onNotice(payload)),
    /** Holds every load until `release`. */
    hold: () => (gate = true),
    release: () => {
      gate = false;
      for (const r of pending.splice(0)) r();
    },
  };
}

const state = (role: AccountState['role'], live: string[] = ['fam']): AccountState => ({
  role,
  accountType: 'public',
  name: 'n',
  liveSessions: new Set(live),
});

describe('AccountStates', () => {
  it('answers from the cache within the TTL and reads again after it', async () => {
    const s = setup();
    s.rows.set(1, state('cso'));
    expect((await s.states.get(1))?.role).toBe('cso');
    s.rows.set(1, state('carbon'));
    s.advance(1999);
    expect((await s.states.get(1))?.role).toBe('cso');
    expect(s.loads()).toBe(1);
    s.advance(1);
    expect((await s.states.get(1))?.role).toBe('carbon');
    expect(s.loads()).toBe(2);
  });

  it('caches an account that does not exist too', async () => {
    const s = setup();
    expect(await s.states.get(7)).toBeUndefined();
    expect(await s.states.get(7)).toBeUndefined();
    expect(s.loads()).toBe(1);
  });

  it('shares one read among concurrent misses', async () => {
    const s = setup();
    s.rows.set(1, state('cso'));
    const all = await Promise.all([s.states.get(1), s.states.get(1), s.states.get(1)]);
    expect(all.map((a) => a?.role)).toEqual(['cso', 'cso', 'cso']);
    expect(s.loads()).toBe(1);
  });

  it('a change notice drops the entry at once, and tells the change listeners', async () => {
    const s = setup();
    const heard: number[] = [];
    s.states.onChange((id) => heard.push(id));
    s.rows.set(1, state('cso'));
    await s.states.get(1);
    s.rows.set(1, state('carbon'));
    s.heardNotice('1');
    expect((await s.states.get(1))?.role).toBe('carbon');
    expect(heard).toEqual([1]);
  });

  it('a read that began before a change does not store what it read', async () => {
    const s = setup();
    s.rows.set(1, state('cso'));
    s.hold();
    const racing = s.states.get(1); // reads the old row, then waits
    s.rows.set(1, state('carbon'));
    const { uow, commit } = s.unit();
    s.states.changedIn(uow, 1);
    await commit();
    s.release();
    expect((await racing)?.role).toBe('cso');
    expect((await s.states.get(1))?.role).toBe('carbon');
  });

  it("the writer's node stores no read between its change and the commit's notice", async () => {
    // PostgreSQL's order: the writer is told in its transaction; the notice comes after the commit.
    const s = setup();
    const said: string[] = [];
    const { uow, commit } = noticeUnit(keptNotices(said));
    s.rows.set(1, state('cso'));
    await s.states.get(1);
    s.states.changedIn(uow, 1); // in the transaction, not committed yet
    expect((await s.states.get(1))?.role).toBe('cso'); // another request reads the old row
    s.rows.set(1, state('cso', [])); // the commit; the notice is not heard yet
    await commit();
    expect((await s.states.get(1))?.liveSessions.has('fam')).toBe(false);
    expect(said).toEqual(['1']);
    // Once the commit's notice is heard, the account is cached again.
    s.heardNotice('1');
    const loads = s.loads();
    await s.states.get(1);
    await s.states.get(1);
    expect(s.loads()).toBe(loads + 1);
  });

  it("the writer's node caches again after the TTL when no notice comes (a rolled-back change)", async () => {
    const s = setup();
    s.rows.set(1, state('cso'));
    // Said in a unit that never commits: no notice ever comes.
    s.states.changedIn(s.unit().uow, 1);
    await s.states.get(1);
    await s.states.get(1);
    expect(s.loads()).toBe(2);
    s.advance(2000);
    await s.states.get(1);
    await s.states.get(1);
    expect(s.loads()).toBe(3);
  });

  it('a reset (notices may have been missed) drops every entry', async () => {
    const s = setup();
    s.rows.set(1, state('cso'));
    s.rows.set(2, state('cso'));
    await s.states.get(1);
    await s.states.get(2);
    s.rows.set(1, state('carbon'));
    s.rows.set(2, state('carbon', []));
    s.reconnected();
    expect((await s.states.get(1))?.role).toBe('carbon');
    expect((await s.states.get(2))?.liveSessions.has('fam')).toBe(false);
  });

  it('keeps at most maxEntries accounts, dropping the oldest', async () => {
    const s = setup({ maxEntries: 2 });
    for (const id of [1, 2, 3]) s.rows.set(id, state('carbon'));
    await s.states.get(1);
    await s.states.get(2);
    await s.states.get(3);
    expect(s.loads()).toBe(3);
    await s.states.get(3);
    await s.states.get(2);
    expect(s.loads()).toBe(3);
    await s.states.get(1);
    expect(s.loads()).toBe(4);
  });
});
