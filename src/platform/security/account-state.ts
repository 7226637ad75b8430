// What an access token's bearer is right now: the account's current role, account type and name,
// and its sign-in sessions (refresh-token families) that may still have a live access token. A
// token's claims are a hint; this is the authority every request and socket is judged by
// (ARCHITECTURE.md, "Token validity").
//
// Each node caches a state for at most `ttlMs` (ACCOUNT_CACHE_MS), kept fresh through the change
// feed as every noticed cache is (db/noticed-cache.ts): a node that changes an account or ends a
// session announces it, and every node drops its entry at once.
import { NoticedCache, idOf } from '../db/noticed-cache.js';
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
  maxEntries?: number | undefined;
  now?: () => number;
}

/** Account states by user id; `undefined` for an account that does not exist. */
export class AccountStates extends NoticedCache<number, AccountState | undefined> {
  constructor(
    /** Reads the account's state from the database; undefined when it does not exist. */
    load: (id: number) => Promise<AccountState | undefined>,
    feed: ChangeFeed,
    opts: AccountStateOptions,
  ) {
    super(load, feed, { ...opts, channel: 'account_changed', keyOf: idOf });
  }
}
