// SQL only: external-login flows, one-time login codes and linked provider identities.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { ClientType } from '../../platform/security/identity.rules.js';
import './oauth.tables.js';

const now = () => dbNow();

export function insertFlow(
  db: Executor,
  v: {
    stateHash: string;
    browserHash: string;
    provider: string;
    codeVerifier: string;
    nonce: string | null;
    clientType: ClientType;
    expiresAt: Date;
  },
) {
  return db
    .insertInto('oauth_flows')
    .values({
      state_hash: v.stateHash,
      provider: v.provider,
      code_verifier: v.codeVerifier,
      nonce: v.nonce,
      browser_hash: v.browserHash,
      client_type: v.clientType,
      expires_at: v.expiresAt,
    })
    .execute();
}

/** Deletes and returns the flow: a state is good for one callback only, whatever its outcome. */
export function consumeFlow(db: Executor, stateHash: string, provider: string) {
  return db
    .deleteFrom('oauth_flows')
    .where('state_hash', '=', stateHash)
    .where('provider', '=', provider)
    .returning(['code_verifier', 'nonce', 'browser_hash', 'client_type', 'expires_at'])
    .executeTakeFirst();
}

/** Flows whose callback never came (the user closed the tab); an hour past expiry is plenty. */
export function deleteStaleFlows(db: Executor) {
  return db
    .deleteFrom('oauth_flows')
    .where('expires_at', '<', sql<Date>`now() - interval '1 hour'`)
    .execute();
}

export function insertLoginCode(
  db: Executor,
  v: { codeHash: string; userId: number; clientType: ClientType; expiresAt: Date },
) {
  return db
    .insertInto('oauth_login_codes')
    .values({ code_hash: v.codeHash, user_id: v.userId, client_type: v.clientType, expires_at: v.expiresAt })
    .execute();
}

/** Marks the code used and returns it, only if it was unused and unexpired: one statement, so
 * two concurrent exchanges of one code cannot both succeed. */
export function consumeLoginCode(db: Executor, codeHash: string) {
  return db
    .updateTable('oauth_login_codes')
    .set({ used_at: now() })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now())
    .returning(['user_id', 'client_type'])
    .executeTakeFirst();
}

export function deleteStaleLoginCodes(db: Executor) {
  return db
    .deleteFrom('oauth_login_codes')
    .where('expires_at', '<', sql<Date>`now() - interval '1 hour'`)
    .execute();
}

export function findIdentity(db: Executor, provider: string, subject: string) {
  return db
    .selectFrom('user_identities')
    .select(['id', 'user_id'])
    .where('provider', '=', provider)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

export function insertIdentity(
  db: Executor,
  v: { userId: number; provider: string; subject: string; email: string | null },
) {
  return db
    .insertInto('user_identities')
    .values({ user_id: v.userId, provider: v.provider, subject: v.subject, email: v.email })
    .execute();
}

export function touchIdentity(db: Executor, id: number, email: string | null) {
  return db
    .updateTable('user_identities')
    .set({ last_login_at: now(), email })
    .where('id', '=', id)
    .execute();
}
