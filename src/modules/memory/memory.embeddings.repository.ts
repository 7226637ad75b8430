// SQL only: the embedding pipeline (chunks waiting for an embedding, writing embeddings in the
// form memory.encoding.ts made, failures, the state of the embeddings).
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { EncodedEmbeddings } from './memory.encoding.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';
import type { VectorTypes } from './memory.sketch.js';

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
