// SQL only: memories, their chunks and the chunks' embeddings. The vector side comes in two
// forms, pgvector's `vector` (an exact scan of the scope) and the fallback without pgvector (a
// Hamming prefilter over binary sketches, then the cosine of the few hundred closest by their int8
// embeddings, both in the service's memory.sketch-index.ts, from rows read here); which one runs follows the
// migration variant applied (deps.database.capabilities.vector), passed in as `vector`.
import { sql, type RawBuilder } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';
import type { MemoryEmbeddingsTable } from './memory.tables.js';
import { int8Array, sketchArray, vectorArray, type VectorTypes } from './memory.sketch.js';

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
 * instead of a parameter per value); `queue` lists the chunks in the embedding queue too.
 * Identity values follow the order rows are inserted in, which is the input order (`order by`
 * the ordinality), so the n-th id belongs to the n-th memory. */
export async function insertMemoriesWithChunks(
  db: Executor,
  list: NewMemory[],
  chunks: NewChunk[],
  opts: { queue: boolean },
): Promise<WrittenMemories> {
  if (list.length === 0) return { ids: [], chunkIds: [], at: new Date() };
  const queue = opts.queue ? sql`, q as (insert into memory_embed_queue (chunk_id) select id from c)` : sql``;
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

// spec: Memory rule 1, contract: "Memory": the caller's (or named user's) memories, the
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

export interface QueryEmbedding {
  values: ArrayLike<number>;
  model: string;
}

export interface SearchParams extends Scope {
  /** The query embedding, or its promise (the full-text side starts without waiting for it);
   * absent when it could not be made (full text only). */
  embedding?: QueryEmbedding | Promise<QueryEmbedding | undefined> | undefined;
  text: string;
  /** Candidates taken from each side before fusion. */
  candidates: number;
  /** Without pgvector: the sketches of the scope, ranked here (memory.sketch-index.ts). */
  sketches?: SketchSearch;
}

export interface SketchQuery {
  model: string;
  dim: number;
  query: ArrayLike<number>;
  /** How many of the sketch-nearest are reranked by cosine (`rerankPool`). */
  pool: number;
  /** How many of them are returned. */
  count: number;
}

/** The sketches of scopes, ranked in the service (memory.sketch-index.ts): `open` starts bringing
 * a scope's up to date; the scan then gives the `count` nearest chunks by the cosine of their int8
 * embeddings among the `pool` sketch-nearest, nearest first (ties by id). */
export interface SketchSearch {
  open(db: Executor, scope: Scope): SketchScan;
}

export interface SketchScan {
  nearest(q: SketchQuery): Promise<(ChunkKey & { distance: number })[]>;
}

export interface SearchRow {
  id: number;
  memory_id: number;
  chunk_index: number;
  conversation_id: number | null;
  distance: number | null;
  rank: number | null;
}

/** How many sketch-nearest candidates the fallback reranks by cosine, for `candidates` results.
 * Measured on the memory bench's data (2048-bit sketches, 5,100 chunks in scope): the exact top 10
 * lies within the 100 nearest 98% of the time and within the 150 nearest 99%; the exact top 50
 * within the 100 nearest 81% (fusion weighs the first ranks most). The rerank runs in the index
 * over the embeddings it holds (~0.5 µs a candidate at 384 dimensions). */
export function rerankPool(candidates: number): number {
  return Math.max(120, candidates * 2);
}

/** Both sides of the hybrid search: the `candidates` nearest chunks by cosine distance (over the
 * whole scope, never a post-filtered index) and the `candidates` best full-text matches (any
 * query word; ts_rank with length normalisation), merged by chunk id.
 * The two sides are separate statements: the full-text side starts at once, the vector side when
 * the embedding (which may be a promise) arrives; on PostgreSQL they run at once on separate pool
 * connections (the turn waits for the slower, not the sum); on PGlite's one connection they
 * queue. Each side reads its chunks' columns itself, by primary key on the few rows it keeps
 * (lateral subqueries with `limit 1`, which the planner cannot flatten into a hash join that scans
 * every chunk of the scope again), so no plan depends on row estimates for CTEs (a nested loop
 * over mis-estimated CTE scans once cost more than both sides together).
 * With pgvector the database scans the scope exactly. Without it, the scope is ranked by the
 * Hamming distance of the embeddings' sketches in this process (`sketches`, kept up to date from
 * the database on every search), and the `rerankPool` nearest are reranked there by the cosine
 * of their int8 embeddings: the vector side reads nothing once the index is up to date. */
export async function searchChunks(db: Executor, vector: boolean, p: SearchParams): Promise<SearchRow[]> {
  // The sketches are brought up to date while the query is being embedded (not at all for a search
  // by full text alone).
  const scan = vector || p.embedding === undefined ? undefined : p.sketches?.open(db, p);
  const [near, text] = await Promise.all([
    Promise.resolve(p.embedding).then((embedding) =>
      embedding ? vectorSide(db, vector, { ...p, embedding }, scan) : [],
    ),
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

export type ChunkKey = Omit<SearchRow, 'distance' | 'rank'>;

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
  p: SearchParams & { embedding: QueryEmbedding },
  scan: SketchScan | undefined,
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
  if (!scan) throw new Error('no sketch index for the vector side');
  return scan.nearest({
    model: p.embedding.model,
    dim: q.length,
    query: q,
    pool: rerankPool(p.candidates),
    count: p.candidates,
  });
}

/** A part of a scope whose sketches the index keeps: one user's embeddings, or the whole world
 * tier; `since` (a transaction id, from `horizon`) limits it to rows written, and embeddings
 * deleted (their tombstones), since. */
export interface SketchPart {
  userId?: number;
  since?: string | undefined;
}

/** An embedding as the sketch index holds it, or (`gone`) the tombstone of a deleted one. */
export type SketchRow = {
  /** The index of the part (in the `parts` asked) the row belongs to. */
  part: number;
  chunk_id: number;
} & (
  | ({ gone: false } & Pick<
      MemoryEmbeddingsTable,
      'user_id' | 'tier' | 'source' | 'model' | 'dim' | 'memory_id' | 'chunk_index' | 'conversation_id'
    > & {
        /** SKETCH_BITS / 8 bytes, most significant bit first (varbit's own order). */
        sketch: Uint8Array;
        /** The embedding as int8 values (memory.sketch.ts `quantize`). */
        embedding_i8: Uint8Array;
      })
  | { gone: true }
);

/** The rows of each part (world when `userId` is absent), and the horizon to ask from next time:
 * the oldest transaction still running when this statement took its snapshot (migration 0016). */
export async function sketchRows(
  db: Executor,
  parts: SketchPart[],
): Promise<{ horizon: string; rows: SketchRow[] }> {
  const branches = parts.flatMap((p, k) => {
    const owner = (t: string) =>
      p.userId !== undefined
        ? sql`${sql.ref(`${t}.user_id`)} = ${p.userId}`
        : sql`${sql.ref(`${t}.tier`)} = 'world'`;
    const since = (t: string) =>
      p.since !== undefined ? sql` and ${sql.ref(`${t}.xid`)} >= ${p.since}::xid8` : sql``;
    const rows = sql`select ${sql.lit(k)}::int as part, false as gone, e.chunk_id, e.user_id, e.tier, e.source,
        e.model, e.dim, substring(varbit_send(e.sketch) from 5) as sketch, e.embedding_i8, e.memory_id,
        e.chunk_index, e.conversation_id
      from memory_embeddings e where ${owner('e')}${since('e')}`;
    // A whole part needs no tombstones: what was deleted is not there.
    if (p.since === undefined) return [rows];
    return [
      rows,
      sql`select ${sql.lit(k)}::int, true, g.chunk_id, null, null, null, null, null, null, null, null, null, null
        from memory_embeddings_gone g where ${owner('g')}${since('g')}`,
    ];
  });
  const r = await sql<SketchRow & { horizon: string }>`
    select h.horizon::text as horizon, d.*
    from (select pg_snapshot_xmin(pg_current_snapshot()) as horizon) h
    left join lateral (${sql.join(branches, sql` union all `)}) d on true`.execute(db);
  const horizon = r.rows[0]!.horizon;
  return { horizon, rows: r.rows.filter((row) => row.chunk_id !== null) };
}

/** Tombstones of deleted embeddings older than `hours` (the sketch index reads a part whole when it
 * has not read it for far less). */
export async function sweepSketchTombstones(db: Executor, hours: number): Promise<number> {
  const r =
    await sql`delete from memory_embeddings_gone where gone_at < now() - ${hours} * interval '1 hour'`.execute(
      db,
    );
  return Number(r.numAffectedRows ?? 0);
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

export type { VectorTypes };

/** The OIDs of pgvector's types here (binary parameters name their element type). */
export async function vectorTypes(db: Executor): Promise<VectorTypes> {
  const r = await sql<{ vector: number | null; sparsevec: number | null }>`
    select to_regtype('vector')::oid::int8 as vector, to_regtype('sparsevec')::oid::int8 as sparsevec`.execute(
    db,
  );
  const row = r.rows[0];
  if (!row?.vector) throw new Error('pgvector is not installed');
  return { vector: row.vector, sparsevec: row.sparsevec };
}

/** Embeddings in the form their columns take, as binary array parameters (memory.sketch.ts):
 * pgvector's `vector` (sent sparse when that is smaller); without pgvector the sketch and the
 * int8 values. Made apart from the statement, so the service can encode while the database
 * writes the chunks. */
export interface EncodedEmbeddings {
  count: number;
  dims: number[];
  vectors?: { data: Buffer; sparse: boolean };
  sketches?: Buffer;
  int8?: Buffer;
}

export function encodeEmbeddings(
  vector: boolean,
  types: VectorTypes | undefined,
  embeddings: ArrayLike<number>[],
): EncodedEmbeddings {
  const dims = embeddings.map((e) => e.length);
  if (vector) {
    if (!types) throw new Error('pgvector types unknown');
    return { count: embeddings.length, dims, vectors: vectorArray(types, embeddings) };
  }
  return {
    count: embeddings.length,
    dims,
    sketches: sketchArray(embeddings),
    int8: int8Array(embeddings),
  };
}

/** The statement's `unnest` arguments and the expression of one embedding (`x.e`, `x.k`). */
function vectorParam(enc: EncodedEmbeddings) {
  const v = enc.vectors!;
  return {
    param: v.sparse ? sql`${v.data}::sparsevec[]` : sql`${v.data}::vector[]`,
    value: v.sparse ? sql`x.e::vector` : sql`x.e`,
  };
}

/** Embeddings of chunks written in this transaction (none has one yet): plain INSERTs, owner,
 * tier and source given, no queue entry to remove. */
export async function insertEmbeddings(
  db: Executor,
  vector: boolean,
  model: string,
  chunks: {
    ids: number[];
    userIds: number[];
    tiers: MemoryTier[];
    sources: MemorySource[];
    /** Without pgvector the chunk's keys are stored with its embedding. */
    memoryIds: number[];
    chunkIndexes: number[];
    conversationIds: (number | null)[];
  },
  enc: EncodedEmbeddings,
) {
  if (chunks.ids.length === 0) return;
  if (chunks.ids.length !== enc.count) throw new Error('embeddings do not match the chunks');
  const cols = sql`${chunks.ids}::bigint[], ${chunks.userIds}::bigint[], ${chunks.tiers}::text[], ${chunks.sources}::text[], ${enc.dims}::int[]`;
  if (vector) {
    const v = vectorParam(enc);
    await sql`
      insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, embedding)
      select x.id, x.user_id, x.tier, x.source, ${model}, x.dim, ${v.value}
      from unnest(${cols}, ${v.param}) as x(id, user_id, tier, source, dim, e)`.execute(db);
    return;
  }
  await sql`
    insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, sketch, embedding_i8,
      memory_id, chunk_index, conversation_id)
    select x.id, x.user_id, x.tier, x.source, ${model}, x.dim, x.k, x.e, x.m, x.n, x.c
    from unnest(${cols}, ${enc.sketches!}::varbit[], ${enc.int8!}::bytea[], ${chunks.memoryIds}::bigint[],
      ${chunks.chunkIndexes}::int[], ${chunks.conversationIds}::bigint[])
      as x(id, user_id, tier, source, dim, k, e, m, n, c)`.execute(db);
}

/** Stores embeddings (replacing an older model's), takes the chunks off the queue and clears
 * their recorded failure, in one statement. Chunks deleted meanwhile are skipped. */
export async function writeEmbeddings(
  db: Executor,
  vector: boolean,
  model: string,
  ids: number[],
  enc: EncodedEmbeddings,
) {
  if (ids.length === 0) return;
  if (ids.length !== enc.count) throw new Error('embeddings do not match the chunks');
  // With pgvector the embedding is a `vector` column of memory_embeddings; without, the sketch and
  // the int8 values are.
  let stored;
  if (vector) {
    const v = vectorParam(enc);
    stored = sql`with x as (select * from unnest(${ids}::bigint[], ${enc.dims}::int[], ${v.param}) as x(id, d, e)),
          v as (select x.id, x.d, ${v.value} as e from x),
          ins as (
            insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, embedding)
            select v.id, c.user_id, c.tier, c.source, ${model}, v.d, v.e from v join memory_chunks c on c.id = v.id
            on conflict (chunk_id) do update
            set model = excluded.model, dim = excluded.dim, embedding = excluded.embedding, embedded_at = now()
          )`;
  } else {
    stored = sql`with v as (select * from unnest(${ids}::bigint[], ${enc.dims}::int[], ${enc.int8!}::bytea[],
              ${enc.sketches!}::varbit[]) as v(id, d, e, s)),
          ins as (
            insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, sketch, embedding_i8,
              memory_id, chunk_index, conversation_id)
            select v.id, c.user_id, c.tier, c.source, ${model}, v.d, v.s, v.e, c.memory_id, c.chunk_index,
              c.conversation_id
            from v join memory_chunks c on c.id = v.id
            on conflict (chunk_id) do update
            set model = excluded.model, dim = excluded.dim, sketch = excluded.sketch,
              embedding_i8 = excluded.embedding_i8, embedded_at = now()
          )`;
  }
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

export function countByTier(db: Executor) {
  return db
    .selectFrom('memories')
    .select(['tier', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('tier')
    .execute();
}
