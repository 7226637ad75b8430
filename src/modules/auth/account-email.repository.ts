// SQL only: email verification and password reset tokens.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { AccountTokenPurpose } from './oauth.tables.js';
import './oauth.tables.js';

const now = () => dbNow();

export function insertToken(
  db: Executor,
  v: { purpose: AccountTokenPurpose; tokenHash: string; userId: number; email: string; expiresAt: Date },
) {
  return db
    .insertInto('account_tokens')
    .values({
      purpose: v.purpose,
      token_hash: v.tokenHash,
      user_id: v.userId,
      email: v.email,
      expires_at: v.expiresAt,
    })
    .execute();
}

/** Marks the token used and returns it, only if it has this purpose and is unused and
 * unexpired: one statement, so a token cannot be spent twice, even concurrently. */
export function consumeToken(db: Executor, purpose: AccountTokenPurpose, tokenHash: string) {
  return db
    .updateTable('account_tokens')
    .set({ used_at: now() })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now())
    .returning(['user_id', 'email'])
    .executeTakeFirst();
}

/** Spends every other open token of the user for a purpose (a reset makes older links useless). */
export function spendAllTokens(db: Executor, userId: number, purpose: AccountTokenPurpose) {
  return db
    .updateTable('account_tokens')
    .set({ used_at: now() })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

export function deleteStaleTokens(db: Executor) {
  return db
    .deleteFrom('account_tokens')
    .where('expires_at', '<', sql<Date>`now() - interval '1 day'`)
    .execute();
}
