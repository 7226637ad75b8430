// SQL only: refresh tokens and API keys.
import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { dbNow, type Db, type Executor } from '../../platform/db/database.js';
import { readTogether } from '../../platform/db/read-together.js';
import type { ApiScope, ClientType } from '../../platform/security/identity.rules.js';

export function insertRefreshToken(
  db: Executor,
  v: { userId: number; familyId: string; tokenHash: string; clientType: ClientType; expiresAt: Date },
) {
  return db
    .insertInto('refresh_tokens')
    .values({
      user_id: v.userId,
      family_id: v.familyId,
      token_hash: v.tokenHash,
      client_type: v.clientType,
      expires_at: v.expiresAt,
    })
    .execute();
}

/** Locks the row: two concurrent refreshes of one token are decided one after the other. */
export function findRefreshTokenForUpdate(db: Executor, tokenHash: string) {
  return db
    .selectFrom('refresh_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst();
}

export function markRefreshTokenUsed(db: Executor, id: number) {
  return db.updateTable('refresh_tokens').set({ used_at: dbNow() }).where('id', '=', id).execute();
}

export function revokeFamily(db: Executor, familyId: string) {
  return db
    .updateTable('refresh_tokens')
    .set({ revoked_at: dbNow() })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

export function revokeAllForUser(db: Executor, userId: number) {
  return db
    .updateTable('refresh_tokens')
    .set({ revoked_at: dbNow() })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The users' token families not revoked with a token issued within `seconds` (each issue of an
 * access token inserts its family's refresh token; a revocation marks every row of the family).
 * The account cache's misses: read together with the accounts' read (read-together.ts). */
export function familiesLiveSince(db: Db, userIds: number[], seconds: number) {
  return readTogether(
    db,
    jsonArrayFrom(
      db
        .selectFrom('refresh_tokens')
        .select(['user_id', 'family_id'])
        .distinct()
        .where('user_id', '=', sql<number>`any(${userIds}::int8[])`)
        .where('revoked_at', 'is', null)
        .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${seconds})`),
    ),
  );
}

/** Sign-in sessions (token families) per client type over the last `hours`: `sessions`, those in
 * use (a token issued to them: the sign-in or a refresh), and `signIns`, those begun (no token of
 * theirs older than the window). A family keeps its client type through its refreshes. */
export function sessionsByClientType(db: Executor, hours: number) {
  return sql<{ client_type: ClientType; sessions: number; sign_ins: number }>`
    select r.client_type,
           count(distinct r.family_id)::int as sessions,
           count(distinct r.family_id) filter (where not exists (
             select 1 from refresh_tokens p
             where p.family_id = r.family_id and p.created_at < now() - make_interval(hours => ${hours})
           ))::int as sign_ins
    from refresh_tokens r
    where r.created_at >= now() - make_interval(hours => ${hours})
    group by r.client_type`.execute(db);
}

/** Drops tokens that can no longer be used by anyone (expired for a day). */
export function deleteExpiredRefreshTokens(db: Executor) {
  return db
    .deleteFrom('refresh_tokens')
    .where('expires_at', '<', sql<Date>`now() - interval '1 day'`)
    .execute();
}

export function insertApiKey(
  db: Executor,
  v: { name: string; prefix: string; keyHash: string; scopes: ApiScope[]; createdBy: number | null },
) {
  return db
    .insertInto('api_keys')
    .values({
      name: v.name,
      prefix: v.prefix,
      key_hash: v.keyHash,
      scopes: v.scopes,
      created_by_user_id: v.createdBy,
    })
    .returning(['id', 'name', 'prefix', 'scopes', 'created_at', 'last_used_at', 'revoked_at'])
    .executeTakeFirstOrThrow();
}

export function findActiveApiKey(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'scopes', 'last_used_at', 'created_by_user_id'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export function touchApiKey(db: Executor, id: number) {
  return db.updateTable('api_keys').set({ last_used_at: dbNow() }).where('id', '=', id).execute();
}

export function listApiKeys(db: Executor) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'scopes', 'created_at', 'last_used_at', 'revoked_at'])
    .orderBy('id')
    .execute();
}

export function revokeApiKey(db: Executor, id: number) {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: dbNow() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export function apiKeyExists(db: Executor, id: number) {
  return db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst();
}
