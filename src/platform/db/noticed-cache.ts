// A per-node cache of records that many requests read and few writes change (an account's state,
// a character's profile, a routing family's protocol), kept fresh through the change feed
// (notifications.ts): a node that changes a record says so on the cache's channel, and every node
// drops its entry. An entry is trusted for at most `ttlMs`, which bounds what a lost notice can
// cost (a LISTEN connection lost and back drops every entry anyway). A read in flight when its
// key is dropped is not stored, so a read that saw the record before the change cannot outlive
// it: a notice is heard once the writer's unit of work committed (on PostgreSQL some time after),
// and whatever was read before it is discarded then.
//
// The writer's own node drops its entry before its transaction commits (`changedIn`), and on
// PostgreSQL hears its own notice only some time after the commit. A read between the two would
// see the record as it was and, stored, serve it on: so after a change, the writer's node reads
// that key afresh and stores nothing until it hears a notice for the key (or for at most `ttlMs`,
// when none comes: a rolled-back change). Another node's notice for the same key ends the window
// too; a read stored then and older than this node's commit is dropped by its own notice.
import { noticeLater, type ChangeFeed } from './notifications.js';
import type { UnitOfWork } from './unit-of-work.js';

export interface NoticedCacheOptions<K, V> {
  /** The change feed's channel the cache's writers and readers share. */
  channel: string;
  ttlMs: number;
  /** At most this many keys cached; the oldest go first. */
  maxEntries?: number | undefined;
  now?: (() => number) | undefined;
  /** The key a notice's payload names (String(key) was said), or undefined for none. */
  keyOf: (payload: string) => K | undefined;
  /** Whether a value read is kept (default: every one). A cache whose writers announce no
   * creation keeps no "not found", which a write may end unannounced. */
  keeps?: ((value: V) => boolean) | undefined;
}

/** The payload that drops every entry (a change that may touch any key). */
const EVERY_KEY = '*';

/** A notice's payload as a record id (the caches keyed by user id). */
export function idOf(payload: string): number | undefined {
  const id = Number(payload);
  return Number.isSafeInteger(id) ? id : undefined;
}

const payloadOf = (key: string | number) => (key === 'every' ? EVERY_KEY : String(key));

interface Entry<V> {
  value: V;
  at: number;
}

export class NoticedCache<K extends string | number, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly loading = new Map<K, Promise<V>>();
  /** Keys this node changed lately, with the time until which their reads are not stored. */
  private readonly unsettled = new Map<K, number>();
  /** Until when no read is stored, after this node changed every key. */
  private everyUnsettledUntil = 0;
  private readonly changeListeners = new Set<(key: K) => void>();
  private readonly now: () => number;
  private readonly unlisten: () => void;

  constructor(
    /** Reads the record from the database (what a missing one is, the loader says). */
    private readonly load: (key: K) => Promise<V>,
    private readonly feed: ChangeFeed,
    private readonly opts: NoticedCacheOptions<K, V>,
  ) {
    this.now = opts.now ?? Date.now;
    this.unlisten = feed.listen(opts.channel, {
      // A notice also ends this node's window for the key (see the header): it is heard once the
      // change committed.
      onNotice: (payload) => {
        if (payload === EVERY_KEY) {
          this.everyUnsettledUntil = 0;
          this.unsettled.clear();
          return this.forgetEvery();
        }
        const key = opts.keyOf(payload);
        if (key === undefined) return;
        this.unsettled.delete(key);
        this.forget(key);
      },
      onReset: () => this.forgetEvery(),
    });
  }

  /** The record now: from the cache when trusted, else read (concurrent misses share one read). */
  get(key: K): Promise<V> | V {
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && now - entry.at < this.opts.ttlMs) return entry.value;
    const inFlight = this.loading.get(key);
    if (inFlight) return inFlight;
    const p = this.load(key).then(
      (value) => {
        // Stored only when no change was announced while it loaded (forget() drops `loading`).
        if (this.loading.get(key) === p) {
          this.loading.delete(key);
          if (!this.isUnsettled(key) && (this.opts.keeps?.(value) ?? true)) this.store(key, value, now);
        }
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key) === p) this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, p);
    return p;
  }

  /** Announces that `key`'s record changed ('every': a change that may touch any key), through
   * the writer's unit of work: every node hears it once the unit committed; this node forgets its
   * entry now. */
  changedIn(uow: UnitOfWork, key: K | 'every'): void {
    this.settleLater(key);
    void noticeLater(uow, this.opts.channel, payloadOf(key));
  }

  /** Called with each key whose record may have changed (after its entry was dropped). */
  onChange(listener: (key: K) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Drops a key's entry (a change another cache heard of, say). */
  forget(key: K): void {
    this.entries.delete(key);
    this.loading.delete(key);
    for (const l of this.changeListeners) l(key);
  }

  close(): void {
    this.unlisten();
    this.entries.clear();
    this.unsettled.clear();
    this.changeListeners.clear();
  }

  private settleLater(key: K | 'every') {
    const now = this.now();
    const until = now + this.opts.ttlMs;
    if (key === 'every') {
      this.everyUnsettledUntil = until;
      return this.forgetEvery();
    }
    this.forget(key);
    // Keys changed once and never read again (deleted records) would stay listed: drop the lapsed
    // ones whenever the list has grown.
    if (this.unsettled.size >= 1000)
      for (const [other, at] of this.unsettled) if (at <= now) this.unsettled.delete(other);
    this.unsettled.set(key, until);
  }

  /** Whether a change this node made to `key` may not have committed yet (see the header). */
  private isUnsettled(key: K): boolean {
    const now = this.now();
    if (now < this.everyUnsettledUntil) return true;
    const until = this.unsettled.get(key);
    if (until === undefined) return false;
    if (now < until) return true;
    this.unsettled.delete(key);
    return false;
  }

  private forgetEvery() {
    for (const key of new Set([...this.entries.keys(), ...this.loading.keys()])) this.forget(key);
  }

  private store(key: K, value: V, at: number) {
    this.entries.delete(key);
    this.entries.set(key, { value, at });
    const max = this.opts.maxEntries ?? 100_000;
    if (this.entries.size > max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
