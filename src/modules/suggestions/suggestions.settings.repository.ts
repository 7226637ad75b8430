// SQL only: each user's auto-execution config (`suggestion_configs`) and what a context means to
// a user beyond its id (`suggestion_contexts`: the chosen protocol, the bound instance, the intent
// of the last message analysed there).
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { AutoExecutionConfig } from './suggestions.rules.js';

// ---- config --------------------------------------------------------------------------------------

const configColumns = [
  'auto_run_orchestrator',
  'auto_transition_on_guard',
  'auto_suggest_next_step',
  'require_confirmation_for',
  'never_auto_execute',
  'undo_window_minutes',
] as const;

export function findConfig(db: Executor, userId: number) {
  return db
    .selectFrom('suggestion_configs')
    .select(configColumns)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}
export type ConfigRow = NonNullable<Awaited<ReturnType<typeof findConfig>>>;

/** A user's config row (undefined: none) and the contexts they bound to an instance, in one
 * statement: the pass after an instance write needs both before it starts. */
export async function configAndBoundContexts(
  db: Executor,
  userId: number,
  instanceId: string,
): Promise<{ config: ConfigRow | undefined; bound: string[] }> {
  const { config_user_id, bound, ...config } = await db
    .selectFrom(sql<{ user_id: number }>`(select ${userId}::bigint as user_id)`.as('u'))
    .leftJoin('suggestion_configs as c', 'c.user_id', 'u.user_id')
    .select(configColumns.map((col) => `c.${col}` as const))
    .select((eb) => [
      'c.user_id as config_user_id',
      sql<string[]>`array(${eb
        .selectFrom('suggestion_contexts')
        .select('context_id')
        .where('instance_id', '=', instanceId)
        .where('user_id', '=', userId)})`.as('bound'),
    ])
    .executeTakeFirstOrThrow();
  // A joined config row has every column.
  return { config: config_user_id === null ? undefined : (config as ConfigRow), bound };
}

export function upsertConfig(db: Executor, userId: number, c: AutoExecutionConfig) {
  const values = {
    auto_run_orchestrator: c.autoRunOrchestrator,
    auto_transition_on_guard: c.autoTransitionOnGuard,
    auto_suggest_next_step: c.autoSuggestNextStep,
    require_confirmation_for: JSON.stringify(c.requireConfirmationFor),
    never_auto_execute: JSON.stringify(c.neverAutoExecute),
    undo_window_minutes: c.undoWindowMinutes,
  };
  return db
    .insertInto('suggestion_configs')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...values, updated_at: dbNow() }))
    .execute();
}

// ---- contexts ------------------------------------------------------------------------------------

export function findContext(db: Executor, userId: number, contextId: string) {
  return db
    .selectFrom('suggestion_contexts')
    .select(['protocol_id', 'instance_id', 'intent_message_hash', 'intent', 'intent_confidence'])
    .where('user_id', '=', userId)
    .where('context_id', '=', contextId)
    .executeTakeFirst();
}
export type ContextRow = NonNullable<Awaited<ReturnType<typeof findContext>>>;

/** Sets some of a context's fields, creating its row when it has none. */
export function upsertContext(
  db: Executor,
  userId: number,
  contextId: string,
  v: {
    protocol_id?: string | null;
    instance_id?: string | null;
    intent_message_hash?: string | null;
    intent?: string | null;
    intent_confidence?: number | null;
  },
) {
  return db
    .insertInto('suggestion_contexts')
    .values({ user_id: userId, context_id: contextId, ...v })
    .onConflict((oc) => oc.columns(['user_id', 'context_id']).doUpdateSet({ ...v, updated_at: dbNow() }))
    .execute();
}
