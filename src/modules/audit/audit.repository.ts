// SQL only: the audit log.
import { sql } from 'kysely';
import { transaction, type Db, type Executor } from '../../platform/db/database.js';
import type { AuditEntry, LogCursor } from './audit.rules.js';

/** Many entries in one statement (columns sent as arrays), committed without waiting for the WAL
 * flush: a crash may lose the last fraction of a second of entries, as it loses those not yet
 * written. */
export function insertMany(db: Db, entries: AuditEntry[]) {
  const col = <T>(f: (e: AuditEntry) => T) => entries.map(f);
  return transaction(db, async ({ trx }) => {
    await sql`select set_config('synchronous_commit', 'off', true)`.execute(trx);
    await sql`
    insert into audit_logs
      (at, request_id, method, path, route, status, problem_code, actor_user_id, actor_kind, api_key_id, ip, duration_ms)
    select * from unnest(
      ${col((e) => e.at.toISOString())}::timestamptz[], ${col((e) => e.requestId)}::text[],
      ${col((e) => e.method)}::text[], ${col((e) => e.path)}::text[], ${col((e) => e.route)}::text[],
      ${col((e) => e.status)}::int[], ${col((e) => e.problemCode)}::text[],
      ${col((e) => e.actorUserId)}::int8[], ${col((e) => e.actorKind)}::text[],
      ${col((e) => e.apiKeyId)}::int8[], ${col((e) => e.ip)}::text[], ${col((e) => e.durationMs)}::float8[]
    )`.execute(trx);
  });
}

export interface LogFilter {
  requestId?: string | undefined;
  actorUserId?: number | undefined;
  method?: string | undefined;
  status?: number | undefined;
  /** A LIKE pattern (prefixPattern). */
  pathPattern?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** Newest first, after `after`; one row more than `limit` (is there a next page?). */
export function list(db: Executor, f: LogFilter, p: { limit: number; after?: LogCursor | undefined }) {
  let q = db.selectFrom('audit_logs').selectAll();
  if (f.requestId !== undefined) q = q.where('request_id', '=', f.requestId);
  if (f.actorUserId !== undefined) q = q.where('actor_user_id', '=', f.actorUserId);
  if (f.method !== undefined) q = q.where('method', '=', f.method);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.pathPattern !== undefined) q = q.where(sql<boolean>`path like ${f.pathPattern}`);
  if (f.from !== undefined) q = q.where('at', '>=', sql<Date>`${f.from}::timestamptz`);
  if (f.to !== undefined) q = q.where('at', '<', sql<Date>`${f.to}::timestamptz`);
  if (p.after) q = q.where(sql<boolean>`(at, id) < (${p.after.at}::timestamptz, ${p.after.id}::int8)`);
  return q
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(p.limit + 1)
    .execute();
}

/** Deletes entries older than the retention, a batch at a time; how many went. */
export async function deleteOlderThan(db: Executor, days: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await sql`
      delete from audit_logs where id in (
        select id from audit_logs where at < now() - make_interval(days => ${days}) limit ${batch}
      )`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < batch) return total;
  }
}
