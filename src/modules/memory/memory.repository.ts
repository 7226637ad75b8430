// SQL only: memories, their chunks and the chunks' embeddings. The vector side comes in two
// forms, pgvector's `vector` (an exact scan of the scope) and the fallback without pgvector (a
// Hamming prefilter over binary sketches in SQL, then the exact cosine of the few hundred
// closest here); which one runs follows the migration variant applied
// (deps.database.capabilities.vector), passed in as `vector`.
import { sql, type RawBuilder } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';
import { cosineDistance, embeddingBytes, sketchLiteral } from './memory.sketch.js';

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
  memory: {
    id: number;
    user_id: number;
    tier: MemoryTier;
    source: MemorySource;
    conversation_id: number | null;
  };
  index: number;
  content: string;
}

/** Chunks of many memories, in multi-row INSERTs of bounded size, each listed in the embedding
 * queue by the same statement. */
export async function insertChunkRows(db: Executor, chunks: NewChunk[]) {
  for (let i = 0; i < chunks.length; i += 2000) {
    await db
      .with('c', (qb) =>
        qb
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
            })),
          )
          .returning('id'),
      )
      .insertInto('memory_embed_queue')
      .columns(['chunk_id'])
      .expression((eb) => eb.selectFrom('c').select('c.id'))
      .execute();
  }
}

export function insertChunks(
  db: Executor,
  m: { id: number; user_id: number; tier: MemoryTier; source: MemorySource; conversation_id: number | null },
  chunks: string[],
) {
  return insertChunkRows(
    db,
    chunks.map((content, index) => ({ memory: m, index, content })),
  );
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

export interface Scope {
  userId: number;
  npcUserId?: number | undefined;
  source?: MemorySource | undefined;
}

// spec: Memory rule 1, API-CONTRACT.md "Memory": the caller's (or named user's) memories, the
// whole world tier, and the named NPC's core tier.
function scopeFilter(alias: string, s: Scope): RawBuilder<unknown> {
  const a = sql.ref(alias);
  const npc =
    s.npcUserId !== undefined
      ? sql` or (${a}.user_id = ${s.npcUserId} and ${a}.tier = 'assistant_core')`
      : sql``;
  const source = s.source ? sql` and ${a}.source = ${s.source}` : sql``;
  return sql`(${a}.user_id = ${s.userId} or ${a}.tier = 'world'${npc})${source}`;
}

/** The same scope as disjoint conditions, one per part (the caller's own rows, the rest of the
 * world tier, the named NPC's core tier): ranked as branches of a UNION ALL, each part is an
 * index-only scan of a covering index (migration 0014) where the OR of scopeFilter is a bitmap
 * heap scan over pages spread across the table. */
function scopeParts(alias: string, s: Scope): RawBuilder<unknown>[] {
  const a = sql.ref(alias);
  const source = s.source ? sql` and ${a}.source = ${s.source}` : sql``;
  const parts = [
    sql`${a}.user_id = ${s.userId}${source}`,
    sql`${a}.tier = 'world' and ${a}.user_id <> ${s.userId}${source}`,
  ];
  if (s.npcUserId !== undefined && s.npcUserId !== s.userId)
    parts.push(sql`${a}.user_id = ${s.npcUserId} and ${a}.tier = 'assistant_core'${source}`);
  return parts;
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

/** How many sketch-nearest candidates the fallback reranks exactly, for `candidates` results.
 * Measured on the memory bench's data (2048-bit sketches, 5,100 chunks in scope): the exact top 10
 * lies within the 100 nearest 98% of the time and within the 150 nearest 99%; the exact top 50
 * within the 100 nearest 81% (fusion weighs the first ranks most). Each candidate costs its
 * embedding's transfer (1.5 KB at 384 dimensions), the main cost of the query. */
export function rerankPool(candidates: number): number {
  return Math.max(120, candidates * 2);
}

/** Both sides of the hybrid search: the `candidates` nearest chunks by cosine distance (over the
 * whole scope, never a post-filtered index) and the `candidates` best full-text matches (any
 * query word; ts_rank with length normalisation), merged by chunk id.
 * The two sides are separate statements started together: on PostgreSQL they run at once on two
 * pool connections (the turn waits for the slower, not the sum); on PGlite's one connection they
 * queue. Each side reads its chunks' columns itself, by primary key on the few rows it keeps
 * (lateral subqueries with `limit 1`, which the planner cannot flatten into a hash join that scans
 * every chunk of the scope again), so no plan depends on row estimates for CTEs (a nested loop
 * over mis-estimated CTE scans once cost more than both sides together).
 * With pgvector the database scans the scope exactly. Without it, the scope is ranked by the
 * Hamming distance of the embeddings' sketches, and the `rerankPool` nearest come back with their
 * float32 embedding for the exact cosine here. */
export async function searchChunks(db: Executor, vector: boolean, p: SearchParams): Promise<SearchRow[]> {
  const [near, text] = await Promise.all([
    p.embedding ? vectorSide(db, vector, { ...p, embedding: p.embedding }) : [],
    textSide(db, p),
  ]);
  const byId = new Map<number, SearchRow>();
  for (const r of near) byId.set(r.id, { ...r, rank: null });
  for (const r of text) {
    const seen = byId.get(r.id);
    if (seen) seen.rank = r.rank;
    else byId.set(r.id, { ...r, distance: null });
  }
  return [...byId.values()];
}

type ChunkKey = Omit<SearchRow, 'distance' | 'rank'>;

async function textSide(db: Executor, p: SearchParams): Promise<(ChunkKey & { rank: number })[]> {
  const r = await sql<ChunkKey & { rank: number }>`
    select c.id, c.memory_id, c.chunk_index, c.conversation_id, ts_rank(c.tsv, q.query, 1)::float8 as rank
    from memory_chunks c, (select replace(plainto_tsquery('english', ${p.text})::text, '&', '|')::tsquery as query) q
    where ${scopeFilter('c', p)} and c.tsv @@ q.query
    order by 5 desc, 1 limit ${p.candidates}`.execute(db);
  return r.rows;
}

async function vectorSide(
  db: Executor,
  vector: boolean,
  p: SearchParams & { embedding: NonNullable<SearchParams['embedding']> },
): Promise<(ChunkKey & { distance: number })[]> {
  const q = p.embedding.values;
  if (vector) {
    const owned = sql`${scopeFilter('e', p)} and e.model = ${p.embedding.model} and e.dim = ${q.length}`;
    const r = await sql<ChunkKey & { distance: number }>`
      select c.id, c.memory_id, c.chunk_index, c.conversation_id, n.distance
      from (select e.chunk_id, (e.embedding <=> ${vectorLiteral(q, true)}::vector)::float8 as distance
            from memory_embeddings e where ${owned} order by 2, 1 limit ${p.candidates}) n
      cross join lateral (select id, memory_id, chunk_index, conversation_id from memory_chunks where id = n.chunk_id limit 1) c`.execute(
      db,
    );
    return r.rows;
  }
  const sketches = sql.join(
    scopeParts('e', p).map(
      (part) => sql`select e.chunk_id, e.sketch from memory_embeddings e
        where ${part} and e.model = ${p.embedding.model} and e.dim = ${q.length}`,
    ),
    sql` union all `,
  );
  const r = await sql<ChunkKey & { embedding: Uint8Array }>`
    select c.id, c.memory_id, c.chunk_index, c.conversation_id, x.embedding
    from (select s.chunk_id from (${sketches}) s
          order by bit_count(s.sketch # ${sketchLiteral(q)}::varbit), 1 limit ${rerankPool(p.candidates)}) n
    cross join lateral (select id, memory_id, chunk_index, conversation_id from memory_chunks where id = n.chunk_id limit 1) c
    cross join lateral (select embedding from memory_embedding_vectors where chunk_id = n.chunk_id limit 1) x`.execute(
    db,
  );
  // The exact cosine of the prefiltered candidates; the `candidates` nearest stay.
  return r.rows
    .map(({ embedding, ...row }) => ({ ...row, distance: cosineDistance(q, embedding) }))
    .sort((a, b) => a.distance - b.distance || a.id - b.id)
    .slice(0, p.candidates);
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

/** Chunks waiting for their first embedding (listed in memory_embed_queue), those of the given
 * memories first. Both lookups run on small indexes, so a backlog of many thousands costs no
 * sort per batch. */
export async function pendingChunks(db: Executor, p: { limit: number; memoryIds?: number[] }) {
  const first = p.memoryIds?.length
    ? await db
        .selectFrom('memory_chunks as c')
        .innerJoin('memory_embed_queue as q', 'q.chunk_id', 'c.id')
        .select(['c.id', 'c.memory_id', 'c.content'])
        .where('c.memory_id', 'in', p.memoryIds)
        .orderBy('c.id')
        .limit(p.limit)
        .execute()
    : [];
  if (first.length >= p.limit) return first;
  // The queue's first entries, then their chunks by primary key (a lateral join: the plan cannot
  // turn into a scan of memory_chunks when the queue's statistics are stale, as after a bulk load
  // that was embedded since).
  const skip = first.map((r) => r.id);
  const rest = (
    await sql<{ id: number; memory_id: number; content: string }>`
      select c.id, c.memory_id, c.content
      from (select chunk_id from memory_embed_queue
            ${skip.length ? sql`where chunk_id <> all(${skip}::bigint[])` : sql``}
            order by chunk_id limit ${p.limit - first.length}) q
      cross join lateral (select id, memory_id, content from memory_chunks where id = q.chunk_id) c
      order by c.id`.execute(db)
  ).rows;
  return [...first, ...rest];
}

/** Whether any chunk waits for its first embedding. */
export async function hasPending(db: Executor): Promise<boolean> {
  return (await db.selectFrom('memory_embed_queue').select('chunk_id').limit(1).execute()).length > 0;
}

/** Chunks embedded by another model or size than the current one (re-embedding after a change;
 * a background sweep, so a scan is acceptable). */
export async function staleChunks(
  db: Executor,
  p: { model: string; dims: number | undefined; limit: number },
) {
  const dims = p.dims !== undefined ? sql` or e.dim <> ${p.dims}` : sql``;
  const r = await sql<{ id: number; memory_id: number; content: string }>`
    select c.id, c.memory_id, c.content from memory_embeddings e join memory_chunks c on c.id = e.chunk_id
    where e.model <> ${p.model}${dims}
    order by e.chunk_id limit ${p.limit}`.execute(db);
  return r.rows;
}

/** Stores embeddings (one multi-row INSERT, replacing an older model's), takes the chunks off the
 * queue and clears their recorded failure, in one statement. Chunks deleted meanwhile are
 * skipped. */
export async function writeEmbeddings(
  db: Executor,
  vector: boolean,
  model: string,
  rows: { id: number; embedding: ArrayLike<number> }[],
) {
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.id);
  const dims = rows.map((r) => r.embedding.length);
  // With pgvector the embedding is a column of memory_embeddings; without, the sketch is, and the
  // float32 embedding goes to memory_embedding_vectors.
  const stored = vector
    ? sql`with v as (select unnest(${ids}::bigint[]) as id, unnest(${dims}::int[]) as d,
              unnest(${rows.map((r) => vectorLiteral(r.embedding, true))}::text[])::vector as e),
          ins as (
            insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, embedding)
            select v.id, c.user_id, c.tier, c.source, ${model}, v.d, v.e from v join memory_chunks c on c.id = v.id
            on conflict (chunk_id) do update
            set model = excluded.model, dim = excluded.dim, embedding = excluded.embedding, embedded_at = now()
          )`
    : sql`with v as (select unnest(${ids}::bigint[]) as id, unnest(${dims}::int[]) as d,
              unnest(${rows.map((r) => embeddingBytes(r.embedding))}::bytea[]) as e, unnest(${rows.map((r) => sketchLiteral(r.embedding))}::text[])::varbit as s),
          ins as (
            insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, sketch)
            select v.id, c.user_id, c.tier, c.source, ${model}, v.d, v.s from v join memory_chunks c on c.id = v.id
            on conflict (chunk_id) do update
            set model = excluded.model, dim = excluded.dim, sketch = excluded.sketch, embedded_at = now()
            returning chunk_id
          ),
          vec as (
            insert into memory_embedding_vectors (chunk_id, embedding)
            select v.id, v.e from v join ins on ins.chunk_id = v.id
            on conflict (chunk_id) do update set embedding = excluded.embedding
          )`;
  await sql`
    ${stored},
    dq as (delete from memory_embed_queue where chunk_id in (select id from v))
    update memory_chunks set embed_error = null where id in (select id from v) and embed_error is not null`.execute(
    db,
  );
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
  const dims = p.dims !== undefined ? sql` and dim = ${p.dims}` : sql``;
  const r = await sql<{ total: number; current: number; failing: number }>`
    select (select count(*) from memory_chunks)::int as total,
      (select count(*) from memory_embeddings where model = ${p.model}${dims})::int as current,
      (select count(*) from memory_chunks where embed_error is not null)::int as failing`.execute(db);
  return r.rows[0] ?? { total: 0, current: 0, failing: 0 };
}

/** Chunks that hold an embedding of another model or size (re-embedding needed). */
export async function hasStaleEmbeddings(
  db: Executor,
  p: { model: string; dims: number | undefined },
): Promise<boolean> {
  const dims = p.dims !== undefined ? sql` or dim <> ${p.dims}` : sql``;
  const r = await sql<{ x: number }>`
    select 1 as x from memory_embeddings where model <> ${p.model}${dims} limit 1`.execute(db);
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
  return db
    .selectFrom('users')
    .select(['id', 'role', 'account_type', 'name'])
    .where('id', '=', id)
    .executeTakeFirst();
}
