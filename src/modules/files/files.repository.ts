// SQL only: upload contexts and their files.
import type { Executor } from '../../platform/db/database.js';

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
