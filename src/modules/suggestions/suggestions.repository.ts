// SQL only: the `suggestions` table (each row a suggestion and its own history record).
import { sql, type Updateable } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { ExpiredReason, SuggestionStatus } from './suggestions.rules.js';
import type { SuggestionsTable } from './suggestions.tables.js';
import type { StoredAction } from './suggestions.triggers.rules.js';

const columns = [
  'id',
  'user_id',
  'context_id',
  'key',
  'type',
  'message',
  'confidence',
  'priority',
  'metadata',
  'actions',
  'ttl',
  'instance_id',
  'channel_id',
  'protocol_id',
  'state',
  'state_visit',
  'status',
  'expired_reason',
  'action_type',
  'auto_executed',
  'response_time_ms',
  'executed_at',
  'execution_time_ms',
  'error',
  'undone_at',
  'outcome',
  'claimed_until',
  'created_at',
] as const;

export interface NewSuggestion {
  userId: number;
  contextId: string;
  key: string;
  type: SuggestionsTable['type'];
  message: string;
  confidence: number;
  priority: number;
  metadata: Record<string, unknown>;
  actions: StoredAction[];
  ttl: number;
  instanceId: string | null;
  channelId: string | null;
  protocolId: string | null;
  state: string | null;
  stateVisit: number | null;
  createdAt: Date;
}

/** Inserts the new suggestions; a key already open (a pass racing this one) is skipped. */
export function insertSuggestions(db: Executor, rows: NewSuggestion[]) {
  return db
    .insertInto('suggestions')
    .values(
      rows.map((r) => ({
        user_id: r.userId,
        context_id: r.contextId,
        key: r.key,
        type: r.type,
        message: r.message,
        confidence: r.confidence,
        priority: r.priority,
        metadata: r.metadata,
        actions: JSON.stringify(r.actions),
        ttl: r.ttl,
        instance_id: r.instanceId,
        channel_id: r.channelId,
        protocol_id: r.protocolId,
        state: r.state,
        state_visit: r.stateVisit,
        created_at: r.createdAt,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'context_id', 'key'])
        // Literal, as the partial index says it: the index is inferred when the insert is planned.
        .where(sql<boolean>`status in ('active', 'accepted')`)
        .doNothing(),
    )
    .returning(columns)
    .execute();
}
export type SuggestionRow = Awaited<ReturnType<typeof insertSuggestions>>[number];

/** A context's open suggestions for a user, and its rows under any of these keys. */
export function contextRows(db: Executor, userId: number, contextId: string, keys: string[]) {
  return db
    .selectFrom('suggestions')
    .select(columns)
    .where('user_id', '=', userId)
    .where('context_id', '=', contextId)
    .where((eb) =>
      eb.or([eb('status', 'in', ['active', 'accepted']), sql<boolean>`key = any(${keys}::text[])`]),
    )
    .execute();
}

/** Active ones become expired (a pass: trigger or ttl; a clear: cleared, accepted ones too). */
export function expire(
  db: Executor,
  ids: string[],
  reason: ExpiredReason,
  from: readonly SuggestionStatus[] = ['active'],
) {
  return db
    .updateTable('suggestions')
    .set({ status: 'expired', expired_reason: reason, updated_at: dbNow() })
    .where(sql<boolean>`id = any(${ids}::uuid[])`)
    .where('status', 'in', from)
    .returning('id')
    .execute();
}

/** One suggestion of a user in a context. */
export function findSuggestion(db: Executor, id: string, userId: number, contextId: string) {
  return db
    .selectFrom('suggestions')
    .select(columns)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('context_id', '=', contextId)
    .executeTakeFirst();
}

/** Takes an open suggestion for one execution until `until` (null: open and unclaimed, it is
 * claimed by someone else, or it is no longer open). */
export function claim(db: Executor, id: string, now: Date, until: Date) {
  return db
    .updateTable('suggestions')
    .set({ claimed_until: until })
    .where('id', '=', id)
    .where('status', 'in', ['active', 'accepted'])
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
    .returning(columns)
    .executeTakeFirst();
}

/** Writes a change to one suggestion and returns it (the claim, if any, is released). */
export function updateSuggestion(
  db: Executor,
  id: string,
  changes: Omit<Updateable<SuggestionsTable>, 'updated_at' | 'claimed_until'>,
  onlyStatus?: readonly SuggestionStatus[],
) {
  let q = db
    .updateTable('suggestions')
    .set({ ...changes, claimed_until: null, updated_at: dbNow() })
    .where('id', '=', id);
  if (onlyStatus) q = q.where('status', 'in', onlyStatus);
  return q.returning(columns).executeTakeFirst();
}

/** Merges custom fields into the metadata. */
export function mergeMetadata(db: Executor, id: string, metadata: Record<string, unknown>) {
  return db
    .updateTable('suggestions')
    .set({ metadata: sql`metadata || ${JSON.stringify(metadata)}::jsonb`, updated_at: dbNow() })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirstOrThrow();
}

/** The open suggestions of a user's context (all, or one id). */
export function openIds(db: Executor, userId: number, contextId: string, id?: string) {
  let q = db
    .selectFrom('suggestions')
    .select('id')
    .where('user_id', '=', userId)
    .where('context_id', '=', contextId)
    .where('status', 'in', ['active', 'accepted']);
  if (id !== undefined) q = q.where('id', '=', id);
  return q.execute();
}

/** History, newest first: by user, channel or instance; `userId` narrows to one user's. */
export function history(
  db: Executor,
  f: { userId?: number; channelId?: string; instanceId?: string; limit: number },
) {
  let q = db.selectFrom('suggestions').select(columns);
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.channelId !== undefined) q = q.where('channel_id', '=', f.channelId);
  if (f.instanceId !== undefined) q = q.where('instance_id', '=', f.instanceId);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}
