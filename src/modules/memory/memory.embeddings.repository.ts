// SQL only: the embedding pipeline (chunks waiting for an embedding, writing embeddings in the
// form memory.encoding.ts made, failures, the state of the embeddings).
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import { nodeAlive, nodeExpiry } from '../../platform/db/liveness.js';
import type { EncodedEmbeddings } from './memory.encoding.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';
import type { VectorTypes } from './memory.sketch.js';

export type PendingChunk = { id: number; memory_id: number; content: string };

/** A queue entry nobody holds: never claimed, its claim lapsed, or its holder is dead (a process
 * killed mid-batch frees its chunks within the liveness timeout, not the lease). */
const claimable = sql`(q.claimed_until is null or q.claimed_until < now() or not ${nodeAlive(sql`q.claimed_by`)})`;

/** Claims up to `limit` chunks waiting for their first embedding (listed in memory_embed_queue)
 * for `holder` (this process's liveness id) and at most `leaseSeconds`, those of the given
 * memories first, and returns them: the caller sends them to the model, and no other worker picks
 * them until its write removes them from the queue, a failure releases them, the claim lapses or
 * the holder dies. `skip locked`: two workers claiming at once take different chunks. Both
 * lookups run on small indexes, so a backlog of many thousands costs no sort per batch. */
export async function claimPending(
  db: Executor,
  p: { limit: number; leaseSeconds: number; holder: string; memoryIds?: number[] },
): Promise<PendingChunk[]> {
  const until = sql`now() + make_interval(secs => ${p.leaseSeconds})`;
  const claim = sql`claimed_until = ${until}, claimed_by = ${p.holder}::uuid`;
  const first = p.memoryIds?.length
    ? (
        await sql<PendingChunk>`
          with picked as (
            select q.chunk_id from memory_embed_queue q join memory_chunks c on c.id = q.chunk_id
            where c.memory_id = any(${p.memoryIds}::bigint[]) and ${claimable}
            order by q.chunk_id limit ${p.limit}
            for update of q skip locked),
          claimed as (
            update memory_embed_queue q set ${claim} from picked
            where q.chunk_id = picked.chunk_id returning q.chunk_id)
          select c.id, c.memory_id, c.content from claimed join memory_chunks c on c.id = claimed.chunk_id
          order by c.id`.execute(db)
      ).rows
    : [];
  if (first.length >= p.limit) return first;
  // The queue's first free entries, then their chunks by primary key (a lateral join: the plan
  // cannot turn into a scan of memory_chunks when the queue's statistics are stale, as after a
  // bulk load that was embedded since). The entries claimed just above are no longer free.
  const rest = (
    await sql<PendingChunk>`
      with picked as (
        select q.chunk_id from memory_embed_queue q where ${claimable}
        order by q.chunk_id limit ${p.limit - first.length}
        for update skip locked),
      claimed as (
        update memory_embed_queue q set ${claim} from picked
        where q.chunk_id = picked.chunk_id returning q.chunk_id)
      select c.id, c.memory_id, c.content
      from claimed cross join lateral (select id, memory_id, content from memory_chunks where id = claimed.chunk_id) c
      order by c.id`.execute(db)
  ).rows;
  return [...first, ...rest];
}

/** Gives claimed chunks back to the queue (their request failed or was never sent). */
export async function releaseClaims(db: Executor, ids: number[]) {
  if (ids.length === 0) return;
  await sql`update memory_embed_queue set claimed_until = null, claimed_by = null
    where chunk_id = any(${ids}::bigint[])`.execute(db);
}

/** Seconds until the first claim still held is free: its lease lapses or its holder, unless it
 * beats again, counts as dead; undefined when nothing waits under a claim. */
export async function claimedFor(db: Executor): Promise<number | undefined> {
  const r = await sql<{ s: number | null }>`
    select extract(epoch from min(least(q.claimed_until, coalesce(${nodeExpiry(sql`q.claimed_by`)}, now())))
      - now())::float8 as s
    from memory_embed_queue q where q.claimed_until >= now()`.execute(db);
  const s = r.rows[0]?.s;
  return s === null || s === undefined ? undefined : s;
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

/** A failed request: counts the attempt and keeps the error on the chunks, and gives them back to
 * the queue (the job's retry claims them again), in one statement. */
export async function recordEmbedFailure(db: Executor, ids: number[], error: string) {
  if (ids.length === 0) return;
  await sql`
    with released as (
      update memory_embed_queue set claimed_until = null, claimed_by = null
      where chunk_id = any(${ids}::bigint[]))
    update memory_chunks set embed_attempts = embed_attempts + 1, embed_error = ${error.slice(0, 500)}
    where id = any(${ids}::bigint[])`.execute(db);
}

/** The embeddings' state (admin health, `memory reembed`): chunks in all, embedded by the current
 * model and size, by another (left to re-embed), never embedded yet, and with a recorded failure. */
export async function embeddingStats(db: Executor, p: { model: string; dims: number | undefined }) {
  const dims = p.dims !== undefined ? sql` and dim = ${p.dims}` : sql``;
  const r = await sql<{ total: number; current: number; stale: number; pending: number; failing: number }>`
    select (select count(*) from memory_chunks)::int as total,
      (select count(*) from memory_embeddings where model = ${p.model}${dims})::int as current,
      (select count(*) from memory_embeddings where not (model = ${p.model}${dims}))::int as stale,
      (select count(*) from memory_embed_queue)::int as pending,
      (select count(*) from memory_chunks where embed_error is not null)::int as failing`.execute(db);
  return r.rows[0] ?? { total: 0, current: 0, stale: 0, pending: 0, failing: 0 };
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
