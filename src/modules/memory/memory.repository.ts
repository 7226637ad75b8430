// SQL only: memories and their chunks (writes, owner reads, listing). Retrieval's statements are in
// memory.search.repository.ts, the embedding pipeline's in memory.embeddings.repository.ts, and
// the encoding of embeddings into column values in memory.encoding.ts.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';

export const memoryColumns = [
  'id',
  'user_id',
  'content',
  'source',
  'tier',
  'metadata',
  'conversation_id',
  'created_at',
  'updated_at',
] as const;

export type MemoryRow = Awaited<ReturnType<typeof findById>> & {};
/** What a retrieved memory is made from (retrieval reads no more of a row). */
export type RetrievalRow = Pick<
  MemoryRow,
  'id' | 'user_id' | 'content' | 'source' | 'tier' | 'conversation_id' | 'created_at'
>;

export function findById(db: Executor, id: number) {
  return db.selectFrom('memories').select(memoryColumns).where('id', '=', id).executeTakeFirst();
}

export function findByIds(db: Executor, ids: number[]) {
  if (ids.length === 0) return Promise.resolve([]);
  // One array parameter: a fixed shape, prepared once per connection (retrieval runs it each turn).
  return db
    .selectFrom('memories')
    .select(memoryColumns)
    .where('id', '=', sql<number>`any(${ids}::bigint[])`)
    .execute();
}

export interface NewMemory {
  userId: number;
  content: string;
  source: MemorySource;
  tier: MemoryTier;
  metadata: Record<string, unknown>;
  conversationId: number | null;
  createdBy: number | null;
}

/** A chunk of the `memory`-th (0-based) of the memories written with it. */
export interface NewChunk {
  memory: number;
  index: number;
  content: string;
}

export interface WrittenMemories {
  /** The memories' ids, in input order. */
  ids: number[];
  /** The chunks' ids, in input order. */
  chunkIds: number[];
  /** created_at and updated_at of every one of them (the transaction's clock). */
  at: Date;
}

/** Memories and their chunks in one statement (columns as arrays: the server reads a few arrays
 * instead of a parameter per value); `queue` lists the chunks in the embedding queue too, free or
 * already under a claim (`holder` for `leaseSeconds`: memory.embedding.ts `claimToHold`).
 * Identity values follow the order rows are inserted in, which is the input order (`order by`
 * the ordinality), so the n-th id belongs to the n-th memory. */
export async function insertMemoriesWithChunks(
  db: Executor,
  list: NewMemory[],
  chunks: NewChunk[],
  opts: { queue: boolean | { holder: string; leaseSeconds: number } },
): Promise<WrittenMemories> {
  if (list.length === 0) return { ids: [], chunkIds: [], at: new Date() };
  const queue =
    opts.queue === false
      ? sql``
      : opts.queue === true
        ? sql`, q as (insert into memory_embed_queue (chunk_id) select id from c)`
        : sql`, q as (insert into memory_embed_queue (chunk_id, claimed_until, claimed_by)
            select id, now() + make_interval(secs => ${opts.queue.leaseSeconds}), ${opts.queue.holder}::uuid from c)`;
  const r = await sql<{ ids: number[]; chunk_ids: number[]; at: Date }>`
    with m as (
      insert into memories (user_id, content, source, tier, metadata, conversation_id, created_by_user_id)
      select x.user_id, x.content, x.source, x.tier, x.metadata, x.conversation_id, x.created_by
      from unnest(${list.map((v) => v.userId)}::bigint[], ${list.map((v) => v.content)}::text[],
                  ${list.map((v) => v.source)}::text[], ${list.map((v) => v.tier)}::text[],
                  ${list.map((v) => JSON.stringify(v.metadata))}::jsonb[], ${list.map((v) => v.conversationId)}::bigint[],
                  ${list.map((v) => v.createdBy)}::bigint[])
        with ordinality as x(user_id, content, source, tier, metadata, conversation_id, created_by, n)
      order by x.n
      returning id, user_id, tier, source, conversation_id),
    mn as (select m.*, row_number() over (order by m.id) as n from m),
    c as (
      insert into memory_chunks (memory_id, user_id, tier, source, conversation_id, chunk_index, content)
      select mn.id, mn.user_id, mn.tier, mn.source, mn.conversation_id, k.chunk_index, k.content
      from unnest(${chunks.map((c) => c.memory + 1)}::int[], ${chunks.map((c) => c.index)}::int[],
                  ${chunks.map((c) => c.content)}::text[]) with ordinality as k(memory, chunk_index, content, n)
      join mn on mn.n = k.memory
      order by k.n
      returning id)${queue}
    select array(select id from m order by id) as ids, array(select id from c order by id) as chunk_ids, now() as at`.execute(
    db,
  );
  const row = r.rows[0]!;
  if (row.ids.length !== list.length || row.chunk_ids.length !== chunks.length)
    throw new Error('memories and chunks written do not match the input');
  return { ids: row.ids, chunkIds: row.chunk_ids, at: row.at };
}

/** New chunks of an existing memory (after an edit), in order; their ids come back in order. */
export async function insertChunks(
  db: Executor,
  m: { id: number; user_id: number; tier: MemoryTier; source: MemorySource; conversation_id: number | null },
  chunks: string[],
  opts: { queue: boolean },
): Promise<number[]> {
  if (chunks.length === 0) return [];
  const queue = opts.queue ? sql`, q as (insert into memory_embed_queue (chunk_id) select id from c)` : sql``;
  const r = await sql<{ ids: number[] }>`
    with c as (
      insert into memory_chunks (memory_id, user_id, tier, source, conversation_id, chunk_index, content)
      select ${m.id}::bigint, ${m.user_id}::bigint, ${m.tier}, ${m.source}, ${m.conversation_id}::bigint, k.n - 1, k.content
      from unnest(${chunks}::text[]) with ordinality as k(content, n)
      order by k.n
      returning id)${queue}
    select array(select id from c order by id) as ids`.execute(db);
  return r.rows[0]!.ids;
}

export function deleteChunks(db: Executor, memoryId: number) {
  return db.deleteFrom('memory_chunks').where('memory_id', '=', memoryId).execute();
}

export function updateMemory(
  db: Executor,
  id: number,
  v: { content?: string; metadata?: string; conversation_id?: number | null },
) {
  return db
    .updateTable('memories')
    .set({ ...v, updated_at: dbNow() })
    .where('id', '=', id)
    .returning(memoryColumns)
    .executeTakeFirst();
}

export async function deleteMemory(db: Executor, id: number, userId: number): Promise<boolean> {
  const r = await db
    .deleteFrom('memories')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Deletes a user's memories of one source whose `metadata[key]` is `value`; how many went. */
export async function deleteByMetadata(
  db: Executor,
  p: { userId: number; source: string; key: string; value: string },
): Promise<number> {
  const r = await db
    .deleteFrom('memories')
    .where('user_id', '=', p.userId)
    .where('source', '=', p.source as never)
    .where(sql<string>`metadata ->> ${p.key}`, '=', p.value)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function list(
  db: Executor,
  opts: { userId?: number | undefined; source?: MemorySource | undefined; limit: number; offset: number },
) {
  let q = db.selectFrom('memories');
  if (opts.userId !== undefined) q = q.where('user_id', '=', opts.userId);
  if (opts.source) q = q.where('source', '=', opts.source);
  const [rows, total] = await Promise.all([
    q
      .select(memoryColumns)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(opts.limit)
      .offset(opts.offset)
      .execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Pages through one owner's memories by id (export). */
export function pageByOwner(db: Executor, userId: number, afterId: number, limit: number) {
  return db
    .selectFrom('memories')
    .select(memoryColumns)
    .where('user_id', '=', userId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

export function countByTier(db: Executor) {
  return db
    .selectFrom('memories')
    .select(['tier', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('tier')
    .execute();
}

/** Which memories about an observer (`metadata.observerId`) to read: those created up to `upTo`,
 * at most `limit`; of one source when given; of these owners only when given. */
export interface ObserverMemoriesQuery {
  observerId: number;
  upTo: string;
  limit: number;
  source?: MemorySource | undefined;
  ownerIds?: readonly number[] | undefined;
}

function aboutObserverAt(db: Executor, p: { observerId: number; upTo: string }) {
  return db
    .selectFrom('memories')
    .where(sql<string>`metadata ->> 'observerId'`, '=', String(p.observerId))
    .where('created_at', '<=', sql<Date>`${p.upTo}::timestamptz`);
}

/** Memories about an observer (see ObserverMemoriesQuery), newest first. */
export function aboutObserver(db: Executor, p: ObserverMemoriesQuery) {
  let q = aboutObserverAt(db, p).select(memoryColumns);
  if (p.source !== undefined) q = q.where('source', '=', p.source);
  if (p.ownerIds !== undefined) q = q.where(sql<boolean>`user_id = any(${p.ownerIds}::int8[])`);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(p.limit).execute();
}

/** Who owns the memories about an observer created up to `upTo`, each once. */
export async function ownersAboutObserver(
  db: Executor,
  p: { observerId: number; upTo: string },
): Promise<number[]> {
  const rows = await aboutObserverAt(db, p).select('user_id').distinct().execute();
  return rows.map((r) => Number(r.user_id));
}

/** The from-item `q` whose `query` matches any word of `text` (English stems). The query is made
 * once per statement, by the inner subquery: written as a plain subquery, the planner pulls it up,
 * and a prepared statement's generic plan then parses the text again for every chunk it tests and
 * ranks (four to ten times the statement's cost). */
export function anyWordOf(text: string) {
  return sql`(select (select replace(plainto_tsquery('english', ${text})::text, '&', '|')::tsquery) as query) q`;
}

/** A stored memory that is still retrievable (it has chunks), as hygiene compares it. */
export interface LiveMemory {
  id: number;
  content: string;
  metadata: Record<string, unknown>;
  conversation_id: number | null;
}

/** A user's retrievable memories of one source that share words with `text` (full text, any of
 * its words), best first: the candidates hygiene compares a new memory with. With a listener,
 * only the memories of its conversation or told to it (`metadata.npcUserId`). */
export async function liveSimilar(
  db: Executor,
  p: {
    userId: number;
    source: MemorySource;
    text: string;
    limit: number;
    listener?: { conversationId: number | null; npcUserId: number | null } | undefined;
  },
): Promise<LiveMemory[]> {
  const l = p.listener;
  // With a listener, its memories are picked first (through the owner's index) and only their
  // chunks tested and ranked: ranking all the owner's chunks and filtering after cost a ts_rank
  // per chunk, and the filter a scan of the whole memories table. Materialized, so the planner
  // keeps that order (joined instead, it scans the owner's full-text index entries first).
  const heard = l
    ? {
        with: sql`with heard as materialized (select id from memories where user_id = ${p.userId}
          and (conversation_id = ${l.conversationId}::bigint
               or metadata ->> 'npcUserId' = ${l.npcUserId === null ? null : String(l.npcUserId)}))`,
        filter: sql`and c.memory_id in (select id from heard)`,
      }
    : { with: sql``, filter: sql`` };
  const r = await sql<LiveMemory>`
    ${heard.with}
    select m.id, m.content, m.metadata, m.conversation_id
    from (select c.memory_id, max(ts_rank(c.tsv, q.query, 1)) as rank
          from memory_chunks c, ${anyWordOf(p.text)}
          where c.user_id = ${p.userId} and c.source = ${p.source} and c.tsv @@ q.query ${heard.filter}
          group by c.memory_id) r
    join memories m on m.id = r.memory_id
    order by r.rank desc, m.id desc
    limit ${p.limit}`.execute(db);
  return r.rows;
}

/** Marks memories superseded (metadata `supersededBy`, `supersededAt`, `supersededReason`) and
 * drops their chunks, so retrieval no longer finds them; the rows stay. Ids already superseded
 * are left as they are. Which ids were marked. */
export async function supersede(
  db: Executor,
  p: { ids: number[]; by: number | null; reason: string },
): Promise<number[]> {
  if (p.ids.length === 0) return [];
  const r = await sql<{ id: number }>`
    with s as (
      update memories
      set metadata = metadata || jsonb_build_object('supersededBy', ${p.by}::bigint,
            'supersededAt', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'supersededReason', ${p.reason}::text),
          updated_at = now()
      where id = any(${p.ids}::bigint[]) and not (metadata ? 'supersededBy')
      returning id),
    gone as (delete from memory_chunks c using s where c.memory_id = s.id)
    select id from s order by id`.execute(db);
  return r.rows.map((x) => x.id);
}
