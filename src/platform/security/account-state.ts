// What an access token's bearer is right now: the account's current role, account type and name,
// and its sign-in sessions (refresh-token families) that may still have a live access token. A token's claims are a hint; this
// is the authority every request and socket is judged by (ARCHITECTURE.md, "Token validity").
//
// Each node caches a state for at most `ttlMs`. A node that changes an account or ends a session
// announces it on the change feed; every node then drops its entry at once. The TTL bounds what a
// lost notice can cost. A read in flight when its account's entry is dropped is not stored, so a
// read that saw the row before the change cannot outlive it: on PostgreSQL the notice arrives
// after the commit, and whatever was read before it is discarded then; on the embedded database
// the notice is said inside the transaction, and a read issued after it waits for the one
// connection until the transaction ends.
//
// The writer's own node is told before its transaction commits (`changed`), and on PostgreSQL it
// hears its own notice only some time after the commit. A read between the two would see the row
// as it was and, stored, serve it to the writer's next request (a logout's token still accepted).
// So for `ttlMs` after a change, the writer's node reads that account afresh and stores nothing.
import type { Executor } from '../db/database.js';
import type { ChangeFeed } from '../db/notifications.js';
import type { AccountType, Role } from './identity.rules.js';

export interface AccountState {
  role: Role;
  accountType: AccountType;
  name: string;
  /** The account's session (refresh-token family) ids in this database that are not ended and
   * issued an access token within an access token's lifetime: a token naming any other session
   * (ended, or never made here) is refused. */
  liveSessions: ReadonlySet<string>;
}

export interface AccountStateOptions {
  ttlMs: number;
  /** At most this many accounts cached; the oldest go first. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  state: AccountState | undefined;
  at: number;
}

const CHANNEL = 'account_changed';

export class AccountStates {
  private readonly entries = new Map<number, Entry>();
  private readonly loading = new Map<number, Promise<AccountState | undefined>>();
  /** Accounts this node changed lately, with the time until which their reads are not stored. */
  private readonly unsettled = new Map<number, number>();
  private readonly changeListeners = new Set<(id: number) => void>();
  private readonly now: () => number;
  private readonly unlisten: () => void;

  constructor(
    /** Reads the account's state from the database; undefined when it does not exist. */
    private readonly load: (id: number) => Promise<AccountState | undefined>,
    private readonly feed: ChangeFeed,
    private readonly opts: AccountStateOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.unlisten = feed.listen(CHANNEL, {
      onNotice: (payload) => {
        const id = Number(payload);
        if (Number.isSafeInteger(id)) this.forget(id);
      },
      onReset: () => {
        for (const id of [...this.entries.keys()]) this.forget(id);
      },
    });
  }

  /** The account's current state, or undefined when it does not exist. */
  get(id: number): Promise<AccountState | undefined> | AccountState | undefined {
    const now = this.now();
    const entry = this.entries.get(id);
    if (entry && now - entry.at < this.opts.ttlMs) return entry.state;
    const inFlight = this.loading.get(id);
    if (inFlight) return inFlight;
    const p = this.load(id).then(
      (state) => {
        // Stored only when no change was announced while it loaded (forget() drops `loading`).
        if (this.loading.get(id) === p) {
          this.loading.delete(id);
          if (!this.isUnsettled(id)) this.store(id, state, now);
        }
        return state;
      },
      (err: unknown) => {
        if (this.loading.get(id) === p) this.loading.delete(id);
        throw err;
      },
    );
    this.loading.set(id, p);
    return p;
  }

  /** Announces that account `id` changed (role, account type, name, deleted, a session ended), on
   * the writer's executor: other nodes hear it when the transaction commits; this node forgets its
   * entry now. */
  async changed(executor: Executor, id: number): Promise<void> {
    this.forget(id);
    const now = this.now();
    // Accounts changed once and never read again (deleted ones) would stay listed: drop the
    // lapsed entries whenever the list has grown.
    if (this.unsettled.size >= 1000)
      for (const [other, until] of this.unsettled) if (until <= now) this.unsettled.delete(other);
    this.unsettled.set(id, now + this.opts.ttlMs);
    await this.feed.notify(executor, CHANNEL, String(id));
  }

  /** Called with each account id whose state may have changed (after its entry was dropped). */
  onChange(listener: (id: number) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  close() {
    this.unlisten();
    this.entries.clear();
    this.unsettled.clear();
    this.changeListeners.clear();
  }

  /** Whether a change this node made to `id` may not have committed yet (see the header). */
  private isUnsettled(id: number): boolean {
    const until = this.unsettled.get(id);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.unsettled.delete(id);
    return false;
  }

  private forget(id: number) {
    this.entries.delete(id);
    this.loading.delete(id);
    for (const l of this.changeListeners) l(id);
  }

  private store(id: number, state: AccountState | undefined, at: number) {
    this.entries.delete(id);
    this.entries.set(id, { state, at });
    const max = this.opts.maxEntries ?? 100_000;
    if (this.entries.size > max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
