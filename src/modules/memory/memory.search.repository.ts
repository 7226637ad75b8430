// SQL only: retrieval over a scope. The vector side comes in two forms, pgvector's `vector` (an
// exact scan of the scope) and the fallback without pgvector (a Hamming prefilter over binary
// sketches, then the cosine of the few hundred closest by their int8 embeddings, both in the
// service's memory.sketch-index.ts, from rows read here); which one runs follows the migration
// variant applied (the database's vector capability), passed in as `vector`.
import { sql, type RawBuilder } from 'kysely';
import { together, type Db, type Executor } from '../../platform/db/database.js';
import { readTogether } from '../../platform/db/read-together.js';
import { vectorLiteral } from './memory.encoding.js';
import { anyWordOf, memoryColumns, type RetrievalRow } from './memory.repository.js';
import type { MemorySource } from './memory.rules.js';
import type { MemoryEmbeddingsTable } from './memory.tables.js';

export interface Scope {
  userId: number;
  npcUserId?: number | undefined;
  /** Several characters' core tiers (a scene's speakers), instead of `npcUserId`'s one. */
  npcUserIds?: number[] | undefined;
  source?: MemorySource | undefined;
  /** A character's reach into the player's memories: given, the player's memories (the world tier
   * aside) count only when they belong to no conversation or to one of these. */
  conversationIds?: number[] | undefined;
}

/** The characters whose core tier a scope reads. */
export function scopeCharacters(s: Scope): number[] {
  return s.npcUserIds ?? (s.npcUserId !== undefined ? [s.npcUserId] : []);
}

// spec: Memory rule 1, contract: "Memory": the caller's (or named user's) memories, the
// whole world tier, and the named NPCs' core tiers.
function scopeFilter(alias: string, s: Scope): RawBuilder<unknown> {
  const a = sql.ref(alias);
  const npcs = scopeCharacters(s);
  const npc =
    npcs.length === 1
      ? sql` or (${a}.user_id = ${npcs[0]} and ${a}.tier = 'assistant_core')`
      : npcs.length > 1
        ? sql` or (${a}.user_id = any(${npcs}::int8[]) and ${a}.tier = 'assistant_core')`
        : sql``;
  const player = s.conversationIds
    ? sql`(${a}.user_id = ${s.userId} and (${a}.conversation_id is null or ${a}.conversation_id = any(${s.conversationIds}::int8[])))`
    : sql`${a}.user_id = ${s.userId}`;
  const source = s.source ? sql` and ${a}.source = ${s.source}` : sql``;
  return sql`(${player} or ${a}.tier = 'world'${npc})${source}`;
}

/** Newest first within the scope (a query without text). */
export function newestInScope(db: Executor, s: Scope, limit: number) {
  return (
    db
      .selectFrom('memories as m')
      .select(memoryColumns.map((c) => `m.${c}` as const))
      .where(scopeFilter('m', s) as never)
      // A superseded memory has left retrieval (memory.exchange.ts).
      .where(sql<boolean>`not (m.metadata ? 'supersededBy')`)
      .orderBy('m.created_at', 'desc')
      .orderBy('m.id', 'desc')
      .limit(limit)
      .execute()
  );
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
  /** The vector side: pgvector's exact scan (`pgvectorIndex`), or without pgvector the sketch
   * index ranking in this process (memory.sketch-index.ts). */
  index: VectorIndex;
}

export interface VectorQuery {
  model: string;
  dim: number;
  query: ArrayLike<number>;
  /** The sketch index: how many of the sketch-nearest are reranked by cosine (`rerankPool`). */
  pool: number;
  /** How many of them are returned. */
  count: number;
}

/** The vector side of retrieval, one interface for both forms: `open` is called as soon as the
 * search starts, with the connection the full-text side runs on (the sketch index brings the
 * scope's sketches up to date there, while the query is being embedded; `ready` settles once that
 * read is answered); the scan then gives the `count` nearest chunks of the scope by cosine, nearest
 * first (ties by id), reading through `db` if it reads at all. pgvector's exact scan
 * (`pgvectorIndex`) or the sketch index's Hamming ranking with an int8 cosine rerank of the `pool`
 * nearest (memory.sketch-index.ts). */
export interface VectorIndex {
  open(db: Executor, scope: Scope): VectorScan;
}

export interface VectorScan {
  ready: Promise<unknown>;
  nearest(q: VectorQuery, db: Executor): Promise<(ChunkKey & { distance: number })[]>;
}

/** With pgvector: an exact `<=>` scan of the scope in the database (never an index that filters
 * after the scan, which could return fewer than `count` rows). Each hit's chunk is read by primary
 * key in a lateral subquery. */
export const pgvectorIndex: VectorIndex = {
  open: (_reads, scope) => ({
    ready: Promise.resolve(),
    async nearest(q, db) {
      // This variant's embeddings carry no conversation: a reach into the player's memories
      // (Scope.conversationIds) is checked on each embedding's chunk.
      const reach = scope.conversationIds !== undefined;
      const owned = sql`${scopeFilter(reach ? 'k' : 'e', scope)} and e.model = ${q.model} and e.dim = ${q.dim}`;
      const from = reach
        ? sql`memory_embeddings e join memory_chunks k on k.id = e.chunk_id`
        : sql`memory_embeddings e`;
      const r = await sql<ChunkKey & { distance: number }>`
      select c.id, c.memory_id, c.chunk_index, c.conversation_id, n.distance
      from (select e.chunk_id, (e.embedding <=> ${vectorLiteral(q.query, true)}::vector)::float8 as distance
            from ${from} where ${owned} order by 2, 1 limit ${q.count}) n
      cross join lateral (select id, memory_id, chunk_index, conversation_id from memory_chunks where id = n.chunk_id limit 1) c`.execute(
        db,
      );
      return r.rows;
    },
  }),
};

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
 * The full-text side starts at once, the vector side when the embedding (which may be a promise)
 * arrives. The full-text read and the sketch index's catch-up read go out in one statement
 * (read-together.ts), with the caller's other reads of the same turn of the event loop. Each side
 * reads its chunks' columns itself, by primary key on the few rows it keeps (lateral subqueries
 * with `limit 1`, which the planner cannot flatten into a hash join that scans every chunk of the
 * scope again), so no plan depends on row estimates for CTEs (a nested loop over mis-estimated CTE
 * scans once cost more than both sides together).
 * With pgvector the database scans the scope exactly. Without it, the scope is ranked by the
 * Hamming distance of the embeddings' sketches in this process (`sketches`, kept up to date from
 * the database on every search), and the `rerankPool` nearest are reranked there by the cosine
 * of their int8 embeddings: the vector side reads nothing once the index is up to date. */
export async function searchChunks(db: Executor, p: SearchParams): Promise<SearchRow[]> {
  const embedded = Promise.resolve(p.embedding);
  // Awaited below, unless the full-text side fails first.
  embedded.catch(() => undefined);
  // Not opened for a search by full text alone.
  const scan = p.embedding === undefined ? undefined : p.index.open(db, p);
  const [, text] = await together([scan?.ready, textSide(db, p)]);
  const embedding = await embedded;
  const near =
    embedding && scan
      ? await scan.nearest(
          {
            model: embedding.model,
            dim: embedding.values.length,
            query: embedding.values,
            pool: rerankPool(p.candidates),
            count: p.candidates,
          },
          db,
        )
      : [];
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

/** The full-text side, read together with the caller's other reads (read-together.ts: the sketch
 * index's catch-up and, in a chat turn, the context's reads). */
async function textSide(db: Db, p: SearchParams): Promise<(ChunkKey & { rank: number })[]> {
  return readTogether(
    db,
    sql<(ChunkKey & { rank: number })[]>`(select coalesce(json_agg(t), '[]'::json) from (
      select c.id, c.memory_id, c.chunk_index, c.conversation_id, ts_rank(c.tsv, q.query, 1)::float8 as rank
      from memory_chunks c, ${anyWordOf(p.text)}
      where ${scopeFilter('c', p)} and c.tsv @@ q.query
      order by 5 desc, 1 limit ${p.candidates}) t)`,
  );
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

/** The rows of each part as one union, each part's rows numbered by its index in `parts`. */
function sketchUnion(parts: SketchPart[]) {
  const branches = parts.flatMap((p, k) => {
    const owner = (t: string) =>
      p.userId !== undefined
        ? sql`${sql.ref(`${t}.user_id`)} = ${p.userId}`
        : sql`${sql.ref(`${t}.tier`)} = 'world'`;
    // The range is closed above by what the snapshot can see at all (so it keeps every row): with
    // one end the planner takes it for a third of the table, finds a plan made once (a prepared
    // statement's generic plan) dearer than one made for the values, and plans the statement, a
    // chat turn's combined read, anew at every run, for more than it costs to run.
    const since = (t: string) =>
      p.since !== undefined
        ? sql` and ${sql.ref(`${t}.xid`)} >= ${p.since}::xid8 and ${sql.ref(`${t}.xid`)} < pg_snapshot_xmax(pg_current_snapshot())`
        : sql``;
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
  return sql.join(branches, sql` union all `);
}

// The horizon: the oldest transaction still running when the statement took its snapshot
// (migration 0016), so the next read from it misses no row committed after.
const horizonNow = sql`pg_snapshot_xmin(pg_current_snapshot())::text`;

/** The rows of each part (world when `userId` is absent), and the horizon to ask from next time:
 * a part read whole, in one statement of its own (binary columns as they are). */
export async function sketchRows(
  db: Executor,
  parts: SketchPart[],
): Promise<{ horizon: string; rows: SketchRow[] }> {
  const r = await sql<SketchRow & { horizon: string }>`
    select h.horizon, d.*
    from (select ${horizonNow} as horizon) h
    left join lateral (${sketchUnion(parts)}) d on true`.execute(db);
  const horizon = r.rows[0]!.horizon;
  return { horizon, rows: r.rows.filter((row) => row.chunk_id !== null) };
}

/** What changed in held parts since their horizons (usually a few rows, or none), read together
 * with the search's other reads (read-together.ts); JSON carries the binary columns as hex. */
export async function sketchChanges(
  db: Db,
  parts: SketchPart[],
): Promise<{ horizon: string; rows: SketchRow[] }> {
  type Held = Extract<SketchRow, { gone: false }>;
  type JsonRow =
    | (Omit<Held, 'sketch' | 'embedding_i8'> & { sketch: string; embedding_i8: string })
    | Extract<SketchRow, { gone: true }>;
  type Json = { horizon: string; rows: JsonRow[] };
  const read = await readTogether(
    db,
    sql<Json>`(select json_build_object('horizon', ${horizonNow},
      'rows', (select coalesce(json_agg(d), '[]'::json) from (${sketchUnion(parts)}) d)))`,
  );
  const bytes = (hex: string) => Buffer.from(hex.slice(2), 'hex');
  const rows = read.rows.map((row): SketchRow => {
    if (row.gone) return { part: row.part, chunk_id: row.chunk_id, gone: true };
    return { ...row, sketch: bytes(row.sketch), embedding_i8: bytes(row.embedding_i8) };
  });
  return { horizon: read.horizon, rows };
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
    from memory_chunks c, ${anyWordOf(s.text)}
    where ${scopeFilter('c', s)} and c.tsv @@ q.query
    group by c.memory_id order by 2 desc, 1 desc limit ${s.limit}`.execute(db);
  return r.rows;
}

/** The memories named, and for each the memory its owner wrote just before and just after it
 * (by time written; a neighbour counts only in the same tier and conversation): the reranker's
 * neighbours. `of` names the memory a neighbour row was read for, and `side` which neighbour it
 * is (null for the memory itself). Each neighbour is the first row of the owner's
 * (user, created_at, id) index on either side, the tier and conversation checked after: inside the
 * scan they made the planner expect one row and sort all the owner's later memories instead. */
const RETRIEVAL_COLUMNS = [
  'id',
  'user_id',
  'content',
  'source',
  'tier',
  'conversation_id',
  'created_at',
] as const satisfies readonly (keyof RetrievalRow)[];

export async function withNeighbours(db: Executor, ids: number[]) {
  if (ids.length === 0) return [];
  // What a retrieved memory is made of (RetrievalRow): a pool and its neighbours are up to three
  // times its size (sixty rows for a search's twenty), whose metadata nobody reads.
  const cols = sql.join(RETRIEVAL_COLUMNS.map((c) => sql.ref(`x.${c}`)));
  const same = sql`x.tier = m.tier and x.conversation_id is not distinct from m.conversation_id`;
  const r = await sql<RetrievalRow & { of: number | null; side: 'previous' | 'next' | null }>`
    with m as (select id, user_id, tier, conversation_id, created_at from memories where id = any(${ids}::bigint[]))
    select ${cols}, null::bigint as of, null as side from memories x where x.id in (select id from m)
    union all
    select ${cols}, m.id, 'previous' from m cross join lateral (
      select * from memories x where x.user_id = m.user_id and (x.created_at, x.id) < (m.created_at, m.id)
      order by x.created_at desc, x.id desc limit 1) x
    where ${same}
    union all
    select ${cols}, m.id, 'next' from m cross join lateral (
      select * from memories x where x.user_id = m.user_id and (x.created_at, x.id) > (m.created_at, m.id)
      order by x.created_at, x.id limit 1) x
    where ${same}`.execute(db);
  return r.rows;
}
