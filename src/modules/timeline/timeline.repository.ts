// SQL only: the instance registry and timeline events.
import { sql } from 'kysely';
import { dbNow, together, type Executor } from '../../platform/db/database.js';
import type { InstanceSource, InstancesTable } from './timeline.tables.js';
import type { Updateable } from 'kysely';

export const instanceColumns = [
  'id',
  'name',
  'level',
  'persona_id',
  'source',
  'parent_instance_id',
  'state_machine_instance_id',
  'channel_id',
  'user_id',
  'is_active',
  'last_seen_at',
  'metadata',
  'is_root',
  'created_at',
] as const;

export function findInstance(db: Executor, id: number) {
  return db.selectFrom('instances').select(instanceColumns).where('id', '=', id).executeTakeFirst();
}
export type InstanceRow = NonNullable<Awaited<ReturnType<typeof findInstance>>>;

/** Several instances by id in one statement (those that exist); one shape for any count, so it
 * stays a prepared statement. */
export function findInstances(db: Executor, ids: number[]): Promise<InstanceRow[]> {
  return db
    .selectFrom('instances')
    .select(instanceColumns)
    .where('id', '=', sql<number>`any(${ids}::int8[])`)
    .execute();
}

/** The player's own instance: the active level-5 instance it owns, the most recently seen first. */
export function findPlayerInstance(db: Executor, userId: number) {
  return db
    .selectFrom('instances')
    .select('id')
    .where('user_id', '=', userId)
    .where('level', '=', 5)
    .where('is_active', '=', true)
    .orderBy(sql`last_seen_at desc nulls last`)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function findRoot(db: Executor) {
  return db.selectFrom('instances').select(instanceColumns).where('is_root', '=', true).executeTakeFirst();
}

/** Creates the root observer unless one exists (the unique partial index decides a race). */
export async function insertRootIfMissing(db: Executor, name: string) {
  await db
    .insertInto('instances')
    .values({
      name,
      level: 8,
      source: 'portal',
      is_root: true,
      metadata: { root: true },
      user_id: null,
      persona_id: null,
      parent_instance_id: null,
      state_machine_instance_id: null,
      channel_id: null,
      last_seen_at: null,
    })
    .onConflict((oc) => oc.column('is_root').where('is_root', '=', true).doNothing())
    .execute();
}

/** The root observer is owned by the first CSO; until one exists it has no owner. */
export function adoptRootOwner(db: Executor, csoId: number) {
  return db
    .updateTable('instances')
    .set({ user_id: csoId })
    .where('is_root', '=', true)
    .where('user_id', 'is', null)
    .execute();
}

export function insertInstance(
  db: Executor,
  v: {
    name: string;
    level: 5 | 8;
    source: InstanceSource;
    personaId: number | null;
    parentInstanceId: number | null;
    stateMachineInstanceId: string | null;
    channelId: string | null;
    userId: number | null;
    metadata: Record<string, unknown>;
  },
) {
  return db
    .insertInto('instances')
    .values({
      name: v.name,
      level: v.level,
      source: v.source,
      persona_id: v.personaId,
      parent_instance_id: v.parentInstanceId,
      state_machine_instance_id: v.stateMachineInstanceId,
      channel_id: v.channelId,
      user_id: v.userId,
      metadata: v.metadata,
      last_seen_at: null,
    })
    .returning(instanceColumns)
    .executeTakeFirstOrThrow();
}

export function updateInstance(db: Executor, id: number, changes: Updateable<InstancesTable>) {
  return db
    .updateTable('instances')
    .set({ ...changes, updated_at: dbNow() })
    .where('id', '=', id)
    .returning(instanceColumns)
    .executeTakeFirst();
}

/** Sets `last_seen_at` of several instances (each its own time), their rows locked first in
 * ascending id order. Two nodes' ingest batches touch the same instances concurrently; a row each
 * locked in the order its events came would deadlock them (PostgreSQL 40P01, the whole batch
 * failing), as would one `UPDATE … WHERE id IN (…)`, which locks rows in whatever order its plan
 * reads them (a join, or a scan in physical order, which an update changes). `SELECT … ORDER BY
 * id FOR NO KEY UPDATE` locks as its sort hands the rows over, in id order; the update after it
 * then only finds rows its transaction holds. Both are made at once, and the transaction runs
 * the lock to its end before the update begins. `NO KEY UPDATE`, the lock the update
 * takes anyway: it does not block the foreign-key checks of events inserted meanwhile. */
export async function touchInstances(db: Executor, touches: readonly { id: number; at: Date }[]) {
  const sorted = [...touches].sort((a, b) => a.id - b.id);
  const ids = sorted.map((t) => t.id);
  const ats = sorted.map((t) => t.at.toISOString());
  await together([
    db
      .selectFrom('instances')
      .select('id')
      .where('id', '=', sql<number>`any(${ids}::int8[])`)
      .orderBy('id')
      .forNoKeyUpdate()
      .execute(),
    sql`update instances set last_seen_at = t.at
      from unnest(${ids}::int8[], ${ats}::timestamptz[]) as t(id, at)
      where instances.id = t.id`.execute(db),
  ]);
}

export async function listInstances(
  db: Executor,
  f: {
    level?: 5 | 8 | undefined;
    source?: InstanceSource | undefined;
    active?: boolean | undefined;
    parentInstanceId?: number | undefined;
    limit: number;
    offset: number;
  },
) {
  let q = db.selectFrom('instances');
  if (f.level !== undefined) q = q.where('level', '=', f.level);
  if (f.source !== undefined) q = q.where('source', '=', f.source);
  if (f.active !== undefined) q = q.where('is_active', '=', f.active);
  if (f.parentInstanceId !== undefined) q = q.where('parent_instance_id', '=', f.parentInstanceId);
  const [rows, total] = await Promise.all([
    q.select(instanceColumns).orderBy('id').limit(f.limit).offset(f.offset).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** The Level-8 instances (observers) by id: all, or those of one owner. */
export function listObservers(db: Executor, ownerId: number | undefined) {
  let q = db.selectFrom('instances').select(instanceColumns).where('level', '=', 8);
  if (ownerId !== undefined) q = q.where('user_id', '=', ownerId);
  return q.orderBy('id').execute();
}

/** Each of these observers and the observers above it, nearest first (`depth` 0 is the observer
 * itself): the walk up `parent_instance_id`, several origins in one statement. A parent is always
 * registered before its child, so the walk ends; the depth bound only guards against a cycle
 * made by hand. */
export function observersAbove(db: Executor, observerIds: readonly number[]) {
  return sql<{ origin: number; id: number; depth: number }>`
    with recursive up(origin, id, parent, depth) as (
      select id, id, parent_instance_id, 0 from instances where id = any(${observerIds}::int8[])
      union all
      select u.origin, i.id, i.parent_instance_id, u.depth + 1
      from instances i join up u on i.id = u.parent
      where u.depth < 64
    )
    select origin, id, depth from up order by origin, depth`.execute(db);
}

export const eventColumns = [
  'id',
  'user_id',
  'event_type',
  'event_text',
  'source',
  'instance_id',
  'observer_id',
  'persona_id',
  'metadata',
  'occurred_at',
  'timeline_at',
] as const;

export interface NewEvent {
  userId: number | null;
  eventType: string;
  eventText: string;
  source: string;
  instanceId: number | null;
  observerId: number;
  personaId: number | null;
  metadata: Record<string, unknown>;
  occurredAt: Date | null;
}

const eventValues = (v: NewEvent) => ({
  user_id: v.userId,
  event_type: v.eventType,
  event_text: v.eventText,
  source: v.source,
  instance_id: v.instanceId,
  observer_id: v.observerId,
  persona_id: v.personaId,
  metadata: v.metadata,
  occurred_at: v.occurredAt ?? sql<Date>`clock_timestamp()`,
});

export function insertEvent(db: Executor, v: NewEvent) {
  return db
    .insertInto('timeline_events')
    .values(eventValues(v))
    .returning(eventColumns)
    .executeTakeFirstOrThrow();
}

/** Several events in one statement, returned in the order given (their ids ascend in it). */
export async function insertEvents(db: Executor, vs: NewEvent[]): Promise<EventRow[]> {
  if (vs.length === 1) return [await insertEvent(db, vs[0]!)];
  const rows = await db
    .insertInto('timeline_events')
    .values(vs.map(eventValues))
    .returning(eventColumns)
    .execute();
  return rows.sort((a, b) => a.id - b.id);
}
export type EventRow = Awaited<ReturnType<typeof insertEvent>>;

/** Newest first. */
export function listEvents(
  db: Executor,
  f: {
    userId?: number | undefined;
    observerId?: number | undefined;
    eventType?: string | undefined;
    limit: number;
  },
) {
  let q = db.selectFrom('timeline_events').select(eventColumns);
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.observerId !== undefined) q = q.where('observer_id', '=', f.observerId);
  if (f.eventType !== undefined) q = q.where('event_type', '=', f.eventType);
  return q.orderBy('timeline_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}

/** Newest first: the events of state-machine instances (`metadata.stateMachineInstanceId`). */
export function listStateMachineEvents(
  db: Executor,
  f: { stateMachineInstanceIds: string[]; eventType?: string | undefined; limit?: number | undefined },
) {
  let q = db
    .selectFrom('timeline_events')
    .select(eventColumns)
    .where(sql<string>`metadata ->> 'stateMachineInstanceId'`, 'in', f.stateMachineInstanceIds);
  if (f.eventType !== undefined) q = q.where('event_type', '=', f.eventType);
  q = q.orderBy('timeline_at', 'desc').orderBy('id', 'desc');
  if (f.limit !== undefined) q = q.limit(f.limit);
  return q.execute();
}

/** Events in all, and those that occurred in the last `hours`. */
export function countEvents(db: Executor, hours: number) {
  return db
    .selectFrom('timeline_events')
    .select([
      (eb) => eb.fn.countAll<number>().as('total'),
      sql<number>`count(*) filter (where occurred_at > now() - make_interval(hours => ${hours}))`.as(
        'recent',
      ),
    ])
    .executeTakeFirstOrThrow();
}
