// SQL only: each observer's meta-state.
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { Awareness } from './observer.tables.js';

const columns = [
  'observer_id',
  'cycles',
  'last_cycle_at',
  'last_cycle_outcome',
  'last_reflection_id',
  'last_reflection_at',
  'awareness',
] as const;

export function findMetaState(db: Executor, observerId: number) {
  return db
    .selectFrom('observer_meta_states')
    .select(columns)
    .where('observer_id', '=', observerId)
    .executeTakeFirst();
}
export type MetaStateRow = NonNullable<Awaited<ReturnType<typeof findMetaState>>>;

/** Notes a new reflection (created or kept). */
export function noteReflection(db: Executor, observerId: number, memoryId: number, at: Date) {
  return db
    .insertInto('observer_meta_states')
    .values({ observer_id: observerId, last_reflection_id: memoryId, last_reflection_at: at, updated_at: at })
    .onConflict((oc) =>
      oc.column('observer_id').doUpdateSet({
        last_reflection_id: memoryId,
        last_reflection_at: at,
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute();
}

/** Counts one more cycle, with its outcome and what it saw. */
export function noteCycle(
  db: Executor,
  observerId: number,
  outcome: 'completed' | 'failed',
  awareness: Awareness,
) {
  return db
    .insertInto('observer_meta_states')
    .values({
      observer_id: observerId,
      cycles: 1,
      last_cycle_at: sql<Date>`now()`,
      last_cycle_outcome: outcome,
      awareness: JSON.stringify(awareness),
      updated_at: sql<Date>`now()`,
    })
    .onConflict((oc) =>
      oc.column('observer_id').doUpdateSet({
        cycles: sql<number>`observer_meta_states.cycles + 1`,
        last_cycle_at: sql<Date>`now()`,
        last_cycle_outcome: outcome,
        awareness: JSON.stringify(awareness),
        updated_at: sql<Date>`now()`,
      }),
    )
    .returning(columns)
    .executeTakeFirstOrThrow();
}
