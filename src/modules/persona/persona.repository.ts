// SQL only: persona sessions.
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { Persona } from './persona.rules.js';

const columns = [
  'id',
  'user_id',
  'observer_id',
  'persona',
  'conversation_id',
  'created_at',
  'last_active_at',
] as const;

export type SessionRow = Awaited<ReturnType<typeof insertSession>>;

export function insertSession(
  db: Executor,
  v: { id: string; userId: number; observerId: number; persona: Persona; conversationId: number },
) {
  return db
    .insertInto('persona_sessions')
    .values({
      id: v.id,
      user_id: v.userId,
      observer_id: v.observerId,
      persona: v.persona,
      conversation_id: v.conversationId,
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
}

/** The user's session, by id or by observer and persona, its last activity set to now (a resume,
 * a chat turn in it); none when the user has no such session. */
export function touchSession(
  db: Executor,
  userId: number,
  which: { id: string } | { observerId: number; persona: Persona },
) {
  let q = db.updateTable('persona_sessions').set({ last_active_at: dbNow() }).where('user_id', '=', userId);
  q =
    'id' in which
      ? q.where('id', '=', which.id)
      : q.where('observer_id', '=', which.observerId).where('persona', '=', which.persona);
  return q.returning(columns).executeTakeFirst();
}

/** One of the user's sessions by id (another user's: none). */
export function findSession(db: Executor, userId: number, id: string) {
  return db
    .selectFrom('persona_sessions')
    .select(columns)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The user's sessions, most recently active first; of one observer when given. */
export function listSessions(db: Executor, userId: number, observerId: number | undefined) {
  let q = db.selectFrom('persona_sessions').select(columns).where('user_id', '=', userId);
  if (observerId !== undefined) q = q.where('observer_id', '=', observerId);
  return q.orderBy('last_active_at', 'desc').orderBy('id').execute();
}
