// SQL only: an observer's unified timeline (its events and those of the instances and observers
// below it), its instances, and their figures now or as of a time.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import { eventColumns, instanceColumns } from './timeline.repository.js';
import { ACTIVITY_CHANGED_EVENT } from './timeline.rules.js';
import type { PageKey, TimelineFilter, TimelineOrder } from './unified.rules.js';

/** Whose events: every event (the root observer), or those linked to these observers. */
export type EventScope = { all: true } | { all: false; observerIds: readonly number[] };

/** The observers below an observer, at any depth (not itself). */
export function observersBelow(db: Executor, observerId: number) {
  return sql<{ id: number }>`
    with recursive below(id) as (
      select id from instances where parent_instance_id = ${observerId} and level = 8
      union all
      select i.id from instances i join below b on i.parent_instance_id = b.id where i.level = 8
    )
    select id from below`.execute(db);
}

const instant = (iso: string) => sql<Date>`${iso}::timestamptz`;

/** Which of `userIds` an observer (not the root) concerns: who owns it or an instance below it
 * at any depth, or whom an event of its timeline (`observerIds`: it and the observers below it)
 * names. The events are looked up per user (`timeline_events_user`), not read as a whole. */
export async function usersConcerned(
  db: Executor,
  observerId: number,
  observerIds: readonly number[],
  userIds: readonly number[],
): Promise<number[]> {
  const r = await sql<{ id: number }>`
    with recursive tree(id) as (
      select ${observerId}::int8
      union all
      select i.id from instances i join tree t on i.parent_instance_id = t.id
    )
    select u.id from unnest(${userIds}::int8[]) as u(id)
    where exists (select 1 from instances i join tree t on t.id = i.id where i.user_id = u.id)
      or exists (
        select 1 from timeline_events e
        where e.user_id = u.id and e.observer_id = any(${observerIds}::int8[]))`.execute(db);
  return r.rows.map((row) => Number(row.id));
}

/** An observer's instances (contract: "Observer"): those below it at any depth; for the root,
 * every instance but itself (a parentless instance hangs from the root). */
function below(db: Executor, observerId: number, root: boolean) {
  if (root) return db.selectFrom('instances').where('is_root', '=', false);
  return db
    .withRecursive('below(id)', (qb) =>
      qb
        .selectFrom('instances')
        .select('id')
        .where('parent_instance_id', '=', observerId)
        .unionAll((u) =>
          u
            .selectFrom('instances as i')
            .innerJoin('below as b', 'i.parent_instance_id', 'b.id')
            .select('i.id'),
        ),
    )
    .selectFrom('instances')
    .where('id', 'in', (s) => s.selectFrom('below').select('id'));
}

/** An observer's instances now, oldest first. */
export function instancesBelow(db: Executor, observerId: number, root: boolean) {
  return below(db, observerId, root).select(instanceColumns).orderBy('id').execute();
}

/** An observer's instances as they were at `at`: those created by then, each with `active_then`,
 * the `isActive` its last `instance_activity_changed` event up to `at` left (true when none).
 * Oldest first. */
export function instancesAsOf(db: Executor, observerId: number, p: { root: boolean; at: string }) {
  return below(db, observerId, p.root)
    .where('created_at', '<=', instant(p.at))
    .select(instanceColumns)
    .select(
      sql<boolean>`coalesce((
        select (e.metadata ->> 'isActive')::boolean from timeline_events e
        where e.instance_id = instances.id and e.event_type = ${sql.lit(ACTIVITY_CHANGED_EVENT)}
          and e.timeline_at <= ${instant(p.at)}
        order by e.timeline_at desc, e.id desc
        limit 1), true)`.as('active_then'),
    )
    .orderBy('id')
    .execute();
}

/** The filters (and the scope) as one condition list. */
function conditions(scope: EventScope, f: TimelineFilter): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  if (!scope.all)
    out.push(
      scope.observerIds.length === 1
        ? sql<SqlBool>`observer_id = ${scope.observerIds[0]}`
        : sql<SqlBool>`observer_id = any(${scope.observerIds}::int8[])`,
    );
  if (f.eventTypes?.length) out.push(sql<SqlBool>`event_type = any(${f.eventTypes}::text[])`);
  if (f.sources?.length) out.push(sql<SqlBool>`source = any(${f.sources}::text[])`);
  if (f.personaIds?.length) out.push(sql<SqlBool>`persona_id = any(${f.personaIds}::int8[])`);
  if (f.instanceId !== undefined) out.push(sql<SqlBool>`instance_id = ${f.instanceId}`);
  if (f.userId !== undefined) out.push(sql<SqlBool>`user_id = ${f.userId}`);
  if (f.q !== undefined) out.push(sql<SqlBool>`text_search @@ websearch_to_tsquery('simple', ${f.q})`);
  if (f.from !== undefined) out.push(sql<SqlBool>`timeline_at >= ${instant(f.from)}`);
  if (f.to !== undefined) out.push(sql<SqlBool>`timeline_at < ${instant(f.to)}`);
  return out;
}

function filtered(db: Executor, scope: EventScope, f: TimelineFilter) {
  let q = db.selectFrom('timeline_events');
  for (const c of conditions(scope, f)) q = q.where(c);
  return q;
}

/** Events in timeline order, ids breaking ties. */
function ordered(db: Executor, scope: EventScope, f: TimelineFilter, order: TimelineOrder) {
  return filtered(db, scope, f).select(eventColumns).orderBy('timeline_at', order).orderBy('id', order);
}

/** A page after `after` (exclusive), one row more than `limit` (is there a next page?), each row
 * with its exact `timelineAt` (microseconds, UTC) for the next cursor. */
export function eventPage(
  db: Executor,
  scope: EventScope,
  f: TimelineFilter,
  p: { order: TimelineOrder; limit: number; after?: PageKey | undefined },
) {
  let q = ordered(db, scope, f, p.order).select(
    sql<string>`to_char(timeline_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('page_key'),
  );
  if (p.after)
    q = q.where(
      p.order === 'desc'
        ? sql<SqlBool>`(timeline_at, id) < (${instant(p.after.at)}, ${p.after.id}::int8)`
        : sql<SqlBool>`(timeline_at, id) > (${instant(p.after.at)}, ${p.after.id}::int8)`,
    );
  return q.limit(p.limit + 1).execute();
}

/** A numbered page (`offset`), newest first. */
export function eventOffsetPage(
  db: Executor,
  scope: EventScope,
  f: TimelineFilter,
  p: { order: TimelineOrder; limit: number; offset: number },
) {
  return ordered(db, scope, f, p.order).limit(p.limit).offset(p.offset).execute();
}

export async function countMatching(db: Executor, scope: EventScope, f: TimelineFilter): Promise<number> {
  const r = await filtered(db, scope, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The export: the first `max` events in order (read through a cursor by the caller). */
export function exportQuery(
  db: Executor,
  scope: EventScope,
  f: TimelineFilter,
  order: TimelineOrder,
  max: number,
) {
  return ordered(db, scope, f, order).limit(max);
}

/** Is there an event past the first `max`? (The export's truncation, asked in its snapshot.) */
export function beyondQuery(db: Executor, scope: EventScope, f: TimelineFilter, max: number) {
  return filtered(db, scope, f)
    .select(sql<number>`1`.as('beyond'))
    .offset(max)
    .limit(1);
}

/** Counts of the events since `since`, grouped by type, source, persona and instance level. */
export function windowBreakdown(db: Executor, scope: EventScope, since: string) {
  return filtered(db, scope, { from: since })
    .select([
      'event_type',
      'source',
      'persona_id',
      sql<string | null>`metadata -> 'instance' ->> 'level'`.as('level'),
      (eb) => eb.fn.countAll<number>().as('n'),
    ])
    .groupBy(['event_type', 'source', 'persona_id', sql`metadata -> 'instance' ->> 'level'`])
    .execute();
}

/** The Level-5 instances among `instanceIds` with no `diary_entry` event since `since`. */
export async function withoutDiary(db: Executor, instanceIds: number[], since: string): Promise<number> {
  if (instanceIds.length === 0) return 0;
  const r = await sql<{ n: number }>`
    select count(*)::int as n from unnest(${instanceIds}::int8[]) as i(id)
    where not exists (
      select 1 from timeline_events e
      where e.instance_id = i.id and e.event_type = 'diary_entry' and e.timeline_at >= ${instant(since)}
    )`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Per instance among `instanceIds`: its `diary_entry` events since `since` and the last one's
 * time (instances with none are left out). */
export function diaryEntries(db: Executor, instanceIds: number[], since: string) {
  if (instanceIds.length === 0) return Promise.resolve([]);
  return sql<{ instance_id: number; entries: number; last_at: Date }>`
    select e.instance_id, count(*)::int as entries, max(e.timeline_at) as last_at
    from timeline_events e
    where e.instance_id = any(${instanceIds}::int8[]) and e.event_type = 'diary_entry'
      and e.timeline_at >= ${instant(since)}
    group by e.instance_id`
    .execute(db)
    .then((r) => r.rows);
}

/** How many distinct instances have events in the scope since `since`. */
export async function activeInstancesSince(db: Executor, scope: EventScope, since: string): Promise<number> {
  const r = await filtered(db, scope, { from: since })
    .where('instance_id', 'is not', null)
    .select(sql<number>`count(distinct instance_id)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The newest `limit` events up to `at` (inclusive). */
export function eventsUpTo(db: Executor, scope: EventScope, at: string, limit: number) {
  return filtered(db, scope, {})
    .where('timeline_at', '<=', instant(at))
    .select(eventColumns)
    .orderBy('timeline_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** How many events up to `at` (inclusive; all when absent), the first and the last time. */
export async function extent(db: Executor, scope: EventScope, at?: string) {
  let q = filtered(db, scope, {});
  if (at !== undefined) q = q.where('timeline_at', '<=', instant(at));
  const r = await q
    .select([
      (eb) => eb.fn.countAll<number>().as('n'),
      (eb) => eb.fn.min('timeline_at').as('first'),
      (eb) => eb.fn.max('timeline_at').as('last'),
    ])
    .executeTakeFirstOrThrow();
  return { count: Number(r.n), first: r.first as Date | null, last: r.last as Date | null };
}

/** Events up to `at` by type. */
export function typesUpTo(db: Executor, scope: EventScope, at: string) {
  return filtered(db, scope, {})
    .where('timeline_at', '<=', instant(at))
    .select(['event_type', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('event_type')
    .execute();
}

/** The newest events since `since` other than `excludeType`, at most `limit`. */
export function recentEvents(
  db: Executor,
  scope: EventScope,
  p: { since: string; excludeType: string; limit: number },
) {
  return filtered(db, scope, { from: p.since })
    .where('event_type', '<>', p.excludeType)
    .select(eventColumns)
    .orderBy('timeline_at', 'desc')
    .orderBy('id', 'desc')
    .limit(p.limit)
    .execute();
}
