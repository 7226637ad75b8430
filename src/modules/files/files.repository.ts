// SQL only: upload contexts and their files.
import { sql } from 'kysely';
import type { Executor, Trx } from '../../platform/db/database.js';

/** Serialises one user's uploads until the transaction ends (the quota check and the insert). */
export async function lockUserUploads(trx: Trx, userId: number) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`uploads:${userId}`}, 0))`.execute(trx);
}

/** Bytes of the user's stored uploads. */
export async function storedBytes(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('uploaded_files as f')
    .innerJoin('upload_contexts as c', 'c.id', 'f.upload_context_id')
    .select(sql<string>`coalesce(sum(f.size), 0)`.as('bytes'))
    .where('c.user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Deletes a context (its files cascade) when it belongs to `userId`; false otherwise. */
export async function deleteContext(db: Executor, contextId: string, userId: number): Promise<boolean> {
  const r = await db
    .deleteFrom('upload_contexts')
    .where('id', '=', contextId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r.numDeletedRows > 0n;
}

/** Deletes every context older than `days` (retention); returns how many. */
export async function deleteContextsOlderThan(db: Executor, days: number): Promise<number> {
  const r = await db
    .deleteFrom('upload_contexts')
    .where('created_at', '<', sql<Date>`now() - ${days} * interval '1 day'`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function insertContext(db: Executor, id: string, userId: number) {
  return db.insertInto('upload_contexts').values({ id, user_id: userId }).execute();
}

export function insertFile(
  db: Executor,
  v: { contextId: string; position: number; name: string; mimeType: string; data: Buffer },
) {
  return db
    .insertInto('uploaded_files')
    .values({
      upload_context_id: v.contextId,
      position: v.position,
      name: v.name,
      mime_type: v.mimeType,
      size: v.data.length,
      data: v.data,
    })
    .returning(['id', 'name', 'mime_type', 'size'])
    .executeTakeFirstOrThrow();
}

/** The files of a context, only when it belongs to `userId`. */
export function filesOfContext(db: Executor, contextId: string, userId: number) {
  return db
    .selectFrom('uploaded_files as f')
    .innerJoin('upload_contexts as c', 'c.id', 'f.upload_context_id')
    .select(['f.id', 'f.name', 'f.mime_type', 'f.size', 'f.data'])
    .where('c.id', '=', contextId)
    .where('c.user_id', '=', userId)
    .orderBy('f.position')
    .execute();
}
