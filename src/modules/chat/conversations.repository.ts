// SQL only: conversations and messages.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { MessageRole, MessageStatus } from './chat.tables.js';

/** What never changes once a conversation is made (the records the service caches). */
const recordColumns = [
  'id',
  'user_id',
  'title',
  'npc_user_ids',
  'is_default',
  'direct_npc_user_id',
  'created_at',
] as const;
const conversationColumns = [...recordColumns, 'updated_at'] as const;
const messageColumns = [
  'id',
  'conversation_id',
  'user_id',
  'role',
  'npc_user_id',
  'text',
  'client_message_id',
  'status',
  'reply_to_id',
  'metadata',
  'created_at',
] as const;

export function insertConversation(
  db: Executor,
  v: { userId: number; title: string; npcUserIds: number[]; isDefault?: boolean },
) {
  return db
    .insertInto('conversations')
    .values({
      user_id: v.userId,
      title: v.title,
      npc_user_ids: v.npcUserIds,
      is_default: v.isDefault ?? false,
    })
    .returning(conversationColumns)
    .executeTakeFirstOrThrow();
}

/** The user's default conversation with the assistant, created on first use (race-safe). One
 * round trip once it exists (every chat turn after the first). */
export async function defaultConversation(db: Executor, userId: number) {
  const find = () => findDefaultConversation(db, userId);
  const found = await find();
  if (found) return found;
  await db
    .insertInto('conversations')
    .values({ user_id: userId, title: '', npc_user_ids: [], is_default: true })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .where(sql<boolean>`is_default`)
        .doNothing(),
    )
    .execute();
  return (await find())!;
}

/** The user's own thread with one character, created on first use (race-safe, as the default). */
export async function directConversation(db: Executor, userId: number, npcUserId: number) {
  const find = () => findDirectConversation(db, userId, npcUserId);
  const found = await find();
  if (found) return found;
  await db
    .insertInto('conversations')
    .values({ user_id: userId, title: '', npc_user_ids: [npcUserId], direct_npc_user_id: npcUserId })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'direct_npc_user_id'])
        .where(sql<boolean>`direct_npc_user_id is not null`)
        .doNothing(),
    )
    .execute();
  return (await find())!;
}

/** The user's own thread with a character, if it exists (read only). */
export function findDirectConversation(db: Executor, userId: number, npcUserId: number) {
  return db
    .selectFrom('conversations')
    .select(conversationColumns)
    .where('user_id', '=', userId)
    .where('direct_npc_user_id', '=', npcUserId)
    .executeTakeFirst();
}

/** The ids of the player's conversations whose characters include every one of `npcUserIds` (what
 * they all heard from the player), or, with `sharedPool`, whose characters are all in it (the pool
 * of the characters set to share what the player tells them). */
export async function conversationsWith(
  db: Executor,
  userId: number,
  npcUserIds: number[],
  sharedPool: number[] | undefined,
): Promise<number[]> {
  const shared =
    sharedPool && sharedPool.length
      ? sql`or (cardinality(npc_user_ids) > 0 and npc_user_ids <@ ${sharedPool}::int8[])`
      : sql``;
  const r = await sql<{ id: number }>`
    select id from conversations
    where user_id = ${userId} and (npc_user_ids @> ${npcUserIds}::int8[] ${shared})`.execute(db);
  return r.rows.map((x) => x.id);
}

/** The user's default conversation, if it exists (read only: never creates it). */
export function findDefaultConversation(db: Executor, userId: number) {
  return db
    .selectFrom('conversations')
    .select(conversationColumns)
    .where('user_id', '=', userId)
    .where('is_default', '=', true)
    .executeTakeFirst();
}

export function findConversation(db: Executor, id: number) {
  return db.selectFrom('conversations').select(conversationColumns).where('id', '=', id).executeTakeFirst();
}

/** Conversations by id, several at once (concurrent chat turns' reads). */
/** Several conversations at once, without their last activity (see recordColumns). */
export function findConversations(db: Executor, ids: number[]) {
  return db
    .selectFrom('conversations')
    .select(recordColumns)
    .where('id', '=', sql<number>`any(${ids}::int8[])`)
    .execute();
}

/** The default conversations of several users at once (those that exist), as findConversations. */
export function findDefaultConversations(db: Executor, userIds: number[]) {
  return db
    .selectFrom('conversations')
    .select(recordColumns)
    .where('user_id', '=', sql<number>`any(${userIds}::int8[])`)
    .where('is_default', '=', true)
    .execute();
}

export async function listConversations(db: Executor, userId: number, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('conversations')
      .select(conversationColumns)
      .where('user_id', '=', userId)
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('conversations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Deletes the user's conversation: the deleted row's `is_default`, or undefined for none. */
export function deleteConversation(db: Executor, id: number, userId: number) {
  return db
    .deleteFrom('conversations')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning('is_default')
    .executeTakeFirst();
}

export interface NewMessage {
  /** An id reserved with reserveMessageId (streamed replies). */
  id?: number;
  conversationId: number;
  userId: number;
  role: MessageRole;
  text: string;
  npcUserId?: number | null;
  clientMessageId?: string | null;
  status?: MessageStatus;
  replyToId?: number | null;
  metadata?: Record<string, unknown>;
}

function messageValues(v: NewMessage) {
  return {
    ...(v.id !== undefined ? { id: v.id } : {}),
    conversation_id: v.conversationId,
    user_id: v.userId,
    role: v.role,
    text: v.text,
    npc_user_id: v.npcUserId ?? null,
    client_message_id: v.clientMessageId ?? null,
    status: v.status ?? ('answered' as const),
    reply_to_id: v.replyToId ?? null,
    metadata: v.metadata ?? {},
  };
}

/** The conversation's activity (its place in the user's list) is when a message arrives: the
 * user's message touches it in the statement that stores it, off the path to the reply. */
function touching(db: Executor, conversationId: number) {
  return db.with('touched', (qb) =>
    qb.updateTable('conversations').set({ updated_at: dbNow() }).where('id', '=', conversationId),
  );
}

/** A message (its conversation touched). */
export function insertMessage(db: Executor, v: NewMessage) {
  return touching(db, v.conversationId)
    .insertInto('chat_messages')
    .values(messageValues(v))
    .returning(messageColumns)
    .executeTakeFirstOrThrow();
}

/** Several messages of one conversation in one statement (its conversation touched), in the
 * order given (identity values follow VALUES order). */
export async function insertMessages(db: Executor, conversationId: number, list: NewMessage[]) {
  if (list.length === 0) return [];
  const rows = await touching(db, conversationId)
    .insertInto('chat_messages')
    .values(list.map(messageValues))
    .returning(messageColumns)
    .execute();
  return rows.sort((a, b) => a.id - b.id);
}

/** A message as its conversation's history reads it through JSON (`json_agg`). */
type MessageJson = Omit<MessageRow, 'created_at'> & { created_at: string };
type MessageRow = Awaited<ReturnType<typeof insertMessage>>;
const historyColumns = sql.join(messageColumns.map((c) => sql.ref(`m.${c}`)));

/** A user's message; the id its reply will take (reserved in the same statement, so the reply
 * sorts after it and a streamed delta can name it before it is stored); and the conversation's
 * last `historyLimit` messages before it, oldest first, read by the same statement too: its
 * subquery sees the table as it was before the insert. */
export async function insertMessageWithHistory(db: Executor, v: NewMessage, historyLimit: number) {
  const row = await touching(db, v.conversationId)
    .insertInto('chat_messages')
    .values(messageValues(v))
    .returning([
      ...messageColumns,
      sql<string>`nextval(pg_get_serial_sequence('chat_messages', 'id'))`.as('reply_id'),
      sql<
        MessageJson[]
      >`(select coalesce(json_agg(h order by h.id), '[]'::json) from (select ${historyColumns} from chat_messages m where m.conversation_id = ${v.conversationId} order by m.id desc limit ${historyLimit}) h)`.as(
        'history',
      ),
    ])
    .executeTakeFirstOrThrow();
  const { reply_id, history, ...message } = row;
  return {
    message,
    replyId: Number(reply_id),
    history: history.map((m): MessageRow => ({ ...m, created_at: new Date(m.created_at) })),
  };
}

/** A turn's replies and its user message marked answered: one statement (a round trip each cost
 * the turn more than the writes themselves). Replies come back in the order given.
 * Called outside any transaction, it commits asynchronously (`synchronous_commit` off for its own
 * implicit transaction): the response is sent without waiting for the WAL flush. A database crash
 * in the next fraction of a second can lose the replies and the `answered` mark together, never
 * the user's message (stored before, synchronously): the message is then `received`, and a retry
 * with its clientMessageId answers it again. */
export async function storeReplies(db: Executor, replies: NewMessage[], answeredId: number) {
  const rows = await db
    .with('answered', (qb) =>
      qb
        .updateTable('chat_messages')
        .set({ status: 'answered' })
        .where('id', '=', answeredId)
        // Evaluated once, before the statement's implicit transaction commits.
        .where(sql<boolean>`(select set_config('synchronous_commit', 'off', true)) = 'off'`),
    )
    .insertInto('chat_messages')
    .values(replies.map(messageValues))
    .returning(messageColumns)
    .execute();
  // Identity values follow VALUES order; a reserved id (the first reply) is the smallest.
  return rows.sort((a, b) => a.id - b.id);
}

/** Takes the next message id from the table's sequence without storing a row. */
export async function reserveMessageId(db: Executor): Promise<number> {
  const r = await sql<{
    id: number;
  }>`select nextval(pg_get_serial_sequence('chat_messages', 'id')) as id`.execute(db);
  return Number(r.rows[0]!.id);
}

export function findByClientMessageId(db: Executor, userId: number, clientMessageId: string) {
  return db
    .selectFrom('chat_messages')
    .select(messageColumns)
    .where('user_id', '=', userId)
    .where('client_message_id', '=', clientMessageId)
    .executeTakeFirst();
}

export function repliesTo(db: Executor, messageId: number) {
  return db
    .selectFrom('chat_messages')
    .select(messageColumns)
    .where('reply_to_id', '=', messageId)
    .orderBy('id')
    .execute();
}

export function setMessageStatus(db: Executor, id: number, status: MessageStatus) {
  return db.updateTable('chat_messages').set({ status }).where('id', '=', id).execute();
}

/** Oldest first; `before` pages backwards from a message id. */
export async function history(db: Executor, conversationId: number, limit: number, before?: number) {
  let q = db.selectFrom('chat_messages').select(messageColumns).where('conversation_id', '=', conversationId);
  if (before !== undefined) q = q.where('id', '<', before);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.reverse();
}

export function lastAssistantMessage(db: Executor, conversationId: number) {
  return db
    .selectFrom('chat_messages')
    .select(messageColumns)
    .where('conversation_id', '=', conversationId)
    .where('role', '=', 'assistant')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function countConversations(db: Executor) {
  return db
    .selectFrom('conversations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
}

/** Messages in all, created in the last `hours`, and failed. */
export function countMessages(db: Executor, hours: number) {
  return db
    .selectFrom('chat_messages')
    .select([
      (eb) => eb.fn.countAll<number>().as('total'),
      sql<number>`count(*) filter (where created_at > now() - make_interval(hours => ${hours}))`.as('recent'),
      sql<number>`count(*) filter (where status = 'failed')`.as('failed'),
    ])
    .executeTakeFirstOrThrow();
}
