// SQL only: memories and their chunks. The vector expressions come in two forms, pgvector's
// `vector` and the exact scan over `real[]`; which one runs follows the migration variant applied
// (deps.database.capabilities.vector), passed in as `vector`.
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';

export const memoryColumns = ['id', 'user_id', 'content', 'source', 'tier', 'metadata', 'conversation_id', 'created_at', 'updated_at'] as const;

export type MemoryRow = Awaited<ReturnType<typeof findById>> & {};

export function findById(db: Executor, id: number) {
  return db.selectFrom('memories').select(memoryColumns).where('id', '=', id).executeTakeFirst();
}

export function findByIds(db: Executor, ids: number[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('memories').select(memoryColumns).where('id', 'in', ids).execute();
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

/** One multi-row INSERT; rows come back in input order (identity values follow VALUES order). */
export async function insertMemories(db: Executor, list: NewMemory[]) {
  if (list.length === 0) return [];
  const rows = await db
    .insertInto('memories')
    .values(
      list.map((v) => ({
        user_id: v.userId,
        content: v.content,
        source: v.source,
        tier: v.tier,
        metadata: JSON.stringify(v.metadata),
        conversation_id: v.conversationId,
        created_by_user_id: v.createdBy,
      })),
    )
    .returning(memoryColumns)
    .execute();
  return rows.sort((a, b) => a.id - b.id);
}

export interface NewChunk {
  memory: { id: number; user_id: number; tier: MemoryTier; source: MemorySource; conversation_id: number | null };
  index: number;
  content: string;
}

/** Chunks of many memories, in multi-row INSERTs of bounded size. */
export async function insertChunkRows(db: Executor, chunks: NewChunk[]) {
  for (let i = 0; i < chunks.length; i += 2000) {
    await db
      .insertInto('memory_chunks')
      .values(
        chunks.slice(i, i + 2000).map((c) => ({
          memory_id: c.memory.id,
          user_id: c.memory.user_id,
          tier: c.memory.tier,
          source: c.memory.source,
          conversation_id: c.memory.conversation_id,
          chunk_index: c.index,
          content: c.content,
          embedding_model: null,
          embedding_dim: null,
          embedded_at: null,
          embed_error: null,
        })),
      )
      .execute();
  }
}

export function insertChunks(
  db: Executor,
  m: { id: number; user_id: number; tier: MemoryTier; source: MemorySource; conversation_id: number | null },
  chunks: string[],
) {
  return insertChunkRows(db, chunks.map((content, index) => ({ memory: m, index, content })));
}

export function deleteChunks(db: Executor, memoryId: number) {
  return db.deleteFrom('memory_chunks').where('memory_id', '=', memoryId).execute();
}

export function updateMemory(db: Executor, id: number, v: { content?: string; metadata?: string; conversation_id?: number | null }) {
  return db
    .updateTable('memories')
    .set({ ...v, updated_at: sql<Date>`now()` as unknown as Date })
    .where('id', '=', id)
    .returning(memoryColumns)
    .executeTakeFirst();
}

export async function deleteMemory(db: Executor, id: number, userId: number): Promise<boolean> {
  const r = await db.deleteFrom('memories').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function list(db: Executor, opts: { userId?: number | undefined; source?: MemorySource | undefined; limit: number; offset: number }) {
  let q = db.selectFrom('memories');
  if (opts.userId !== undefined) q = q.where('user_id', '=', opts.userId);
  if (opts.source) q = q.where('source', '=', opts.source);
  const [rows, total] = await Promise.all([
    q.select(memoryColumns).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).offset(opts.offset).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Pages through one owner's memories by id (export). */
export function pageByOwner(db: Executor, userId: number, afterId: number, limit: number) {
  return db.selectFrom('memories').select(memoryColumns).where('user_id', '=', userId).where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

export interface Scope {
  userId: number;
  npcUserId?: number | undefined;
  source?: MemorySource | undefined;
}

// spec: Memory rule 1, API-CONTRACT.md "Memory": the caller's (or named user's) memories, the
// whole world tier, and the named NPC's core tier.
function scopeFilter(alias: string, s: Scope): RawBuilder<unknown> {
  const a = sql.ref(alias);
  const npc = s.npcUserId !== undefined ? sql` or (${a}.user_id = ${s.npcUserId} and ${a}.tier = 'assistant_core')` : sql``;
  const source = s.source ? sql` and ${a}.source = ${s.source}` : sql``;
  return sql`(${a}.user_id = ${s.userId} or ${a}.tier = 'world'${npc})${source}`;
}

/** Newest first within the scope (a query without text). */
export function newestInScope(db: Executor, s: Scope, limit: number) {
  return db
    .selectFrom('memories as m')
    .select(memoryColumns.map((c) => `m.${c}` as const))
    .where(scopeFilter('m', s) as never)
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(limit)
    .execute();
}

/** A vector as the literal its column type parses: `[…]` for pgvector, `{…}` for real[]. */
export function vectorLiteral(v: ArrayLike<number>, vector: boolean): string {
  // Seven significant digits: what a float4 holds, and half the text of a double's digits.
  const body = Array.from(v, (x) => (Number.isFinite(x) && x !== 0 ? Number(x.toPrecision(7)) : 0)).join(',');
  return vector ? `[${body}]` : `{${body}}`;
}

export interface SearchParams extends Scope {
  /** The query embedding; absent when it could not be made (full text only). */
  embedding?: { values: ArrayLike<number>; model: string } | undefined;
  text: string;
  /** Candidates taken from each side before fusion. */
  candidates: number;
}

export interface SearchRow {
  id: number;
  memory_id: number;
  chunk_index: number;
  conversation_id: number | null;
  distance: number | null;
  rank: number | null;
}

/** Both sides of the hybrid search in one round trip: the `candidates` nearest chunks by cosine
 * distance (an exact scan of the scope, never a post-filtered index) and the `candidates` best
 * full-text matches (any query word; ts_rank with length normalisation). */
export async function searchChunks(db: Executor, vector: boolean, p: SearchParams): Promise<SearchRow[]> {
  const scope = scopeFilter('c', p);
  const tsquery = sql`replace(plainto_tsquery('english', ${p.text})::text, '&', '|')::tsquery`;
  let vectorSide = sql`select null::bigint as id, null::float8 as distance where false`;
  if (p.embedding) {
    const lit = vectorLiteral(p.embedding.values, vector);
    const dim = p.embedding.values.length;
    const distance = vector
      ? sql`(c.embedding <=> ${lit}::vector)`
      : sql`(1 - (select sum(x * y) from unnest(c.embedding, ${lit}::real[]) as u(x, y)))`;
    vectorSide = sql`select c.id, ${distance}::float8 as distance from memory_chunks c
      where ${scope} and c.embedding is not null and c.embedding_model = ${p.embedding.model} and c.embedding_dim = ${dim}
      order by 2 limit ${p.candidates}`;
  }
  const r = await sql<SearchRow>`
    with v as (${vectorSide}),
    q as (select ${tsquery} as query),
    t as (
      select c.id, ts_rank(c.tsv, q.query, 1)::float8 as rank from memory_chunks c, q
      where ${scope} and c.tsv @@ q.query
      order by 2 desc limit ${p.candidates}
    )
    select c.id, c.memory_id, c.chunk_index, c.conversation_id, v.distance, t.rank
    from memory_chunks c left join v on v.id = c.id left join t on t.id = c.id
    where c.id in (select id from v union all select id from t)`.execute(db);
  return r.rows;
}

/** Plain lexical search over the same scope (the benchmark's baseline): best chunk per memory. */
export async function lexicalSearch(db: Executor, s: Scope & { text: string; limit: number }) {
  const r = await sql<{ memory_id: number; rank: number }>`
    select c.memory_id, max(ts_rank(c.tsv, q.query, 1))::float8 as rank
    from memory_chunks c, (select replace(plainto_tsquery('english', ${s.text})::text, '&', '|')::tsquery as query) q
    where ${scopeFilter('c', s)} and c.tsv @@ q.query
    group by c.memory_id order by 2 desc, 1 desc limit ${s.limit}`.execute(db);
  return r.rows;
}

/** Chunks waiting for their first embedding, those of the given memories first. Both lookups run
 * on indexes (the partial index of unembedded chunks, the (memory_id, chunk_index) key), so a
 * backlog of many thousands costs no sort per batch. */
export async function pendingChunks(db: Executor, p: { limit: number; memoryIds?: number[] }) {
  const first = p.memoryIds?.length
    ? await db
        .selectFrom('memory_chunks')
        .select(['id', 'memory_id', 'content'])
        .where(sql<boolean>`embedding is null`)
        .where('memory_id', 'in', p.memoryIds)
        .orderBy('id')
        .limit(p.limit)
        .execute()
    : [];
  if (first.length >= p.limit) return first;
  const rest = await db
    .selectFrom('memory_chunks')
    .select(['id', 'memory_id', 'content'])
    .where(sql<boolean>`embedding is null`)
    .$if(first.length > 0, (q) => q.where('id', 'not in', first.map((r) => r.id)))
    .orderBy('id')
    .limit(p.limit - first.length)
    .execute();
  return [...first, ...rest];
}

/** Chunks embedded by another model or size than the current one (re-embedding after a change;
 * a background sweep, so a scan is acceptable). */
export async function staleChunks(db: Executor, p: { model: string; dims: number | undefined; limit: number }) {
  const dims = p.dims !== undefined ? sql` or embedding_dim <> ${p.dims}` : sql``;
  const r = await sql<{ id: number; memory_id: number; content: string }>`
    select id, memory_id, content from memory_chunks
    where embedding is not null and (embedding_model <> ${p.model}${dims})
    order by id limit ${p.limit}`.execute(db);
  return r.rows;
}

export async function writeEmbeddings(db: Executor, vector: boolean, model: string, rows: { id: number; embedding: ArrayLike<number> }[]) {
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.id);
  const lits = rows.map((r) => vectorLiteral(r.embedding, vector));
  const dims = rows.map((r) => r.embedding.length);
  const cast = vector ? sql`v.e::vector` : sql`v.e::real[]`;
  await sql`
    update memory_chunks c
    set embedding = ${cast}, embedding_model = ${model}, embedding_dim = v.d, embedded_at = now(), embed_error = null
    from (select unnest(${ids}::bigint[]) as id, unnest(${lits}::text[]) as e, unnest(${dims}::int[]) as d) v
    where c.id = v.id`.execute(db);
}

export async function recordEmbedFailure(db: Executor, ids: number[], error: string) {
  if (ids.length === 0) return;
  await db
    .updateTable('memory_chunks')
    .set((eb) => ({ embed_attempts: eb('embed_attempts', '+', 1), embed_error: error.slice(0, 500) }))
    .where('id', 'in', ids)
    .execute();
}

export async function embeddingStats(db: Executor, p: { model: string; dims: number | undefined }) {
  const dims = p.dims !== undefined ? sql` and embedding_dim = ${p.dims}` : sql``;
  const r = await sql<{ total: number; current: number; failing: number }>`
    select count(*)::int as total,
      count(*) filter (where embedding is not null and embedding_model = ${p.model}${dims})::int as current,
      count(*) filter (where embed_error is not null)::int as failing
    from memory_chunks`.execute(db);
  return r.rows[0] ?? { total: 0, current: 0, failing: 0 };
}

/** Chunks that hold an embedding of another model or size (re-embedding needed). */
export async function hasStaleEmbeddings(db: Executor, p: { model: string; dims: number | undefined }): Promise<boolean> {
  const dims = p.dims !== undefined ? sql` or embedding_dim <> ${p.dims}` : sql``;
  const r = await sql<{ x: number }>`
    select 1 as x from memory_chunks where embedding is not null and (embedding_model <> ${p.model}${dims}) limit 1`.execute(db);
  return r.rows.length > 0;
}

/** The assistant's own user until the characters module provides it: the first silicon NPC
 * account carrying the configured assistant name. */
export function findAssistantUser(db: Executor, name: string) {
  return db
    .selectFrom('users')
    .select(['id'])
    .where('role', '=', 'silicon')
    .where('account_type', '=', 'npc')
    .where('name', '=', name)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export function findUserIdentity(db: Executor, id: number) {
  return db.selectFrom('users').select(['id', 'role', 'account_type', 'name']).where('id', '=', id).executeTakeFirst();
}
