// Writing memories, on both lanes (pgvector on PGlite, sketches and float32 bytes on Postgres):
// with the offline embedder the embeddings are stored by addMemories itself, in its transaction;
// with a remote provider the chunks wait in the queue for the job (or the next query request).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { transaction } from '../../platform/db/database.js';
import { hashEmbedding } from '../../platform/models/lexical-embedder.js';
import { OfflineProvider } from '../../platform/models/offline.js';
import { SEMANTIC_EMBEDDING_MODEL } from '../../platform/models/semantic-embedder.js';
import * as embeddings from './memory.embeddings.repository.js';
import * as encoding from './memory.encoding.js';
import * as search from './memory.search.repository.js';
import { int8View, quantize, sketchBytes } from './memory.sketch.js';

async function chunksOf(t: TestApp, memoryIds: number[]) {
  const r = await sql<{
    id: number;
    memory_id: number;
    chunk_index: number;
    content: string;
    model: string | null;
    dim: number | null;
    queued: boolean;
  }>`
    select c.id, c.memory_id, c.chunk_index, c.content, e.model, e.dim,
      exists (select 1 from memory_embed_queue q where q.chunk_id = c.id) as queued
    from memory_chunks c left join memory_embeddings e on e.chunk_id = c.id
    where c.memory_id = any(${memoryIds}::bigint[]) order by c.id`.execute(t.deps.db);
  return r.rows;
}

/** The stored embedding of a chunk: float32 values with pgvector; without it, the sketch's bits
 * and the int8 values. */
async function storedEmbedding(t: TestApp, chunkId: number) {
  if (t.deps.database.capabilities.vector) {
    const r = await sql<{ v: string }>`
      select embedding::text as v from memory_embeddings where chunk_id = ${chunkId}`.execute(t.deps.db);
    // pgvector prints the shortest text that reads back as the same float4.
    return { values: (JSON.parse(r.rows[0]!.v) as number[]).map(Math.fround) };
  }
  const r = await sql<{ e: Uint8Array; s: string }>`
    select embedding_i8 as e, sketch::text as s from memory_embeddings where chunk_id = ${chunkId}`.execute(
    t.deps.db,
  );
  return { int8: Array.from(int8View(r.rows[0]!.e)), sketch: r.rows[0]!.s };
}

/** The chunk's stored embedding is exactly `expected` in the database's variant. */
/** What the default offline embedder makes of a text. */
async function embedOffline(text: string): Promise<Float32Array> {
  return Float32Array.from((await new OfflineProvider().embed([text])).embeddings[0]!);
}

async function expectStored(t: TestApp, chunkId: number, expected: Float32Array) {
  const stored = await storedEmbedding(t, chunkId);
  if ('values' in stored) expect(stored.values).toEqual(Array.from(expected));
  else {
    expect(stored.int8).toEqual(Array.from(quantize(expected)));
    expect(stored.sketch).toBe(bits(sketchBytes(expected)));
  }
}

const bits = (b: Uint8Array) => Array.from(b, (x) => x.toString(2).padStart(8, '0')).join('');

describe('with the offline embedder', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ MEMORY_CHUNK_SIZE: '200', MEMORY_CHUNK_OVERLAP: '40' });
    [alice, bob] = await Promise.all([createUser(t, 'public'), createUser(t, 'public')]);
  });
  afterAll(() => t.close());

  it('stores every embedding before addMemories returns: no queue, no job, searchable by vector', async () => {
    const m = t.deps.services.memory;
    const long = Array.from(
      { length: 14 },
      (_, i) => `Sentence ${i} about the lighthouse on the cliff.`,
    ).join(' ');
    const inputs = [
      { userId: alice.id, source: 'shared' as const, content: 'Alice grows purple carrots in tubs.' },
      {
        userId: bob.id,
        source: 'shared' as const,
        content: long,
        metadata: { conversationId: 77, z: 1, a: [2] },
      },
      {
        userId: alice.id,
        source: 'core_belief' as const,
        content: 'Quiet mornings are best.',
        createdBy: bob.id,
      },
    ];
    const written = await m.addMemories(inputs);
    const chunks = await chunksOf(
      t,
      written.map((w) => w.id),
    );
    // The long one is chunked, every chunk in order under its own memory.
    expect(chunks.filter((c) => c.memory_id === written[1]!.id).length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.memory_id)).toEqual([...chunks.map((c) => c.memory_id)].sort((a, b) => a - b));
    for (const c of chunks) {
      expect(c).toMatchObject({ model: SEMANTIC_EMBEDDING_MODEL, dim: 384, queued: false });
      // Exactly the offline embedding of the chunk (float32; without pgvector its sketch and int8).
      await expectStored(t, c.id, await embedOffline(c.content));
    }
    // No job was needed: nothing is pending and the vector side finds the memory right away.
    expect(await embeddings.hasPending(t.deps.db)).toBe(false);
    const near = await search.searchChunks(t.deps.db, {
      userId: alice.id,
      text: 'zzzz-no-word-matches',
      candidates: 5,
      index: t.deps.services.memory.sketches ?? search.pgvectorIndex,
      embedding: {
        values: await embedOffline('Alice grows purple carrots in tubs.'),
        model: SEMANTIC_EMBEDDING_MODEL,
      },
    });
    const best = near.filter((r) => r.distance !== null).sort((a, b) => a.distance! - b.distance!)[0]!;
    expect(best.memory_id).toBe(written[0]!.id);
    // The same text: distance 0 up to float4 rounding (pgvector) or the int8 quantisation.
    expect(best.distance).toBeLessThan(t.deps.database.capabilities.vector ? 1e-5 : 1e-3);
    // The call is recorded like any other model call.
    await t.deps.models.flush();
    const calls = await t.deps.db
      .selectFrom('model_calls')
      .select(['purpose', 'outcome'])
      .where('purpose', '=', 'memory.embed')
      .execute();
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.outcome === 'ok')).toBe(true);
  });

  it('answers what a read of the same memories answers', async () => {
    const m = t.deps.services.memory;
    const written = await m.addMemories([
      {
        userId: alice.id,
        source: 'shared',
        content: 'Alice once lost a kite over the bay.',
        metadata: { zeta: 'last', alpha: { nested: [1, 'two', null] }, conversationId: 12 },
      },
      { userId: alice.id, source: 'shared', content: 'Alice likes rain.', conversationId: 5 },
    ]);
    for (const w of written) {
      const r = await t.api('GET', `/api/memories/${w.id}`, { token: alice.accessToken });
      expect(r.status).toBe(200);
      expect(w).toEqual(r.body);
    }
    expect(written[0]!.conversationId).toBe(12);
    expect(written[1]!.conversationId).toBe(5);
  });

  it('embeds the chat exchange (deferEmbedding) and an edit in the same transaction too', async () => {
    const m = t.deps.services.memory;
    const [exchange] = await transaction(t.deps.db, async (uow) => {
      const { trx } = uow;
      const out = await m.addMemories(
        [{ userId: alice.id, source: 'shared', content: 'Alice: hello\nAssistant: hi Alice' }],
        uow,
        { deferEmbedding: true },
      );
      // Inside the transaction already: nothing left for the next turn or a job.
      const inside = await sql<{ n: number }>`
        select count(*)::int as n from memory_chunks c join memory_embeddings e on e.chunk_id = c.id
        where c.memory_id = ${out[0]!.id}`.execute(trx);
      expect(inside.rows[0]!.n).toBe(1);
      return out;
    });
    expect((await chunksOf(t, [exchange!.id]))[0]).toMatchObject({ queued: false, dim: 384 });

    const edited = await t.api('PATCH', `/api/memories/${exchange!.id}`, {
      token: alice.accessToken,
      body: {
        content: 'Alice: goodbye for now, see you at the harbour market tomorrow morning\nAssistant: bye',
      },
    });
    expect(edited.status).toBe(200);
    const after = await chunksOf(t, [exchange!.id]);
    expect(after.length).toBeGreaterThan(0);
    for (const c of after) {
      expect(c).toMatchObject({ model: SEMANTIC_EMBEDDING_MODEL, queued: false });
      await expectStored(t, c.id, await embedOffline(c.content));
    }
    expect(await embeddings.hasPending(t.deps.db)).toBe(false);
  });

  it('writes nothing when one memory of the batch is refused', async () => {
    const m = t.deps.services.memory;
    const before = await t.deps.db
      .selectFrom('memories')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await expect(
      m.addMemories([
        { userId: alice.id, source: 'shared', content: 'fine' },
        { userId: 987654321, source: 'shared', content: 'no such owner' },
      ]),
    ).rejects.toMatchObject({ code: '23503' });
    const after = await t.deps.db
      .selectFrom('memories')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('keeps the references the foreign keys kept (0013: checked once per statement)', async () => {
    const m = t.deps.services.memory;
    const db = t.deps.db;
    const carol = await createUser(t, 'public');
    await expect(
      m.addMemory({ userId: alice.id, source: 'shared', content: 'x', createdBy: 987654321 }),
    ).rejects.toMatchObject({ code: '23503' });
    const mine = await m.addMemories([
      { userId: carol.id, source: 'shared', content: 'Carol hides letters in the piano.' },
      { userId: carol.id, source: 'shared', content: 'Carol owns a red bicycle.' },
    ]);
    const authored = await m.addMemory({
      userId: alice.id,
      source: 'shared',
      content: 'Carol told Alice a secret.',
      createdBy: carol.id,
    });
    const ownerOf = sql<{ n: number }>`select count(*)::int as n from memories where user_id = ${carol.id}`;
    // An owner cannot be changed to a user that does not exist.
    await expect(
      sql`update memories set user_id = 987654321 where id = ${mine[0]!.id}`.execute(db),
    ).rejects.toMatchObject({ code: '23503' });

    // Deleting a memory takes its chunks and their embeddings.
    const [gone] = await chunksOf(t, [mine[0]!.id]);
    await sql`delete from memories where id = ${mine[0]!.id}`.execute(db);
    const left = await sql<{ c: number; e: number }>`
      select (select count(*) from memory_chunks where id = ${gone!.id})::int as c,
             (select count(*) from memory_embeddings where chunk_id = ${gone!.id})::int as e`.execute(db);
    expect(left.rows[0]).toEqual({ c: 0, e: 0 });

    // Deleting the user takes their memories (and chunks) and clears them as author.
    const [kept] = await chunksOf(t, [mine[1]!.id]);
    expect((await ownerOf.execute(db)).rows[0]!.n).toBe(1);
    await sql`delete from users where id = ${carol.id}`.execute(db);
    expect((await ownerOf.execute(db)).rows[0]!.n).toBe(0);
    const chunk = await sql<{ n: number }>`
      select count(*)::int as n from memory_chunks where id = ${kept!.id}`.execute(db);
    expect(chunk.rows[0]!.n).toBe(0);
    const author = await sql<{ created_by_user_id: number | null }>`
      select created_by_user_id from memories where id = ${authored.id}`.execute(db);
    expect(author.rows[0]).toEqual({ created_by_user_id: null });
  });
});

// pgvector exists only on the embedded database here (the lane's PostgreSQL has none), so this
// runs on PGlite in both lanes.
describe('pgvector binary parameters (PGlite)', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ DATABASE_URL: 'memory://', DB_SCHEMA: undefined });
    owner = await createUser(t, 'public');
  });
  afterAll(() => t.close());

  it('sends dense and sparse vectors alike', async () => {
    const db = t.deps.db;
    expect(t.deps.database.capabilities.vector).toBe(true);
    const types = await embeddings.vectorTypes(db);
    const [mem] = await t.deps.services.memory.addMemories([
      { userId: owner.id, source: 'shared', content: 'one' },
    ]);
    const [chunk] = await chunksOf(t, [mem!.id]);
    const dense = Array.from({ length: 8 }, (_, i) => (i + 1) / 10);
    const sparse = [0, 0, 0.5, 0, 0, 0, -0.25, 1e-60];
    for (const v of [dense, sparse, [Number.NaN, 1, 0, 0, 0, 0, 0, 0]]) {
      const enc = encoding.encodeEmbeddings(true, types, [v]);
      expect(enc.vectors!.sparse).toBe(v !== dense);
      await embeddings.writeEmbeddings(db, true, 'test-model', [chunk!.id], enc);
      const stored = await storedEmbedding(t, chunk!.id);
      // float4 values; what float4 cannot hold (NaN, underflow) is stored as 0.
      expect('values' in stored && stored.values).toEqual(
        v.map((x) => (Number.isFinite(Math.fround(x)) ? Math.fround(x) : 0)),
      );
    }
  });
});

describe('with a remote embedding provider', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await createTestApp(fake.env());
    alice = await createUser(t, 'public');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('queues the chunks with the memory and embeds them in the job', async () => {
    const m = t.deps.services.memory;
    const written = await transaction(t.deps.db, async (uow) => {
      const { trx } = uow;
      const out = await m.addMemories(
        [
          { userId: alice.id, source: 'shared', content: 'Alice collects sea glass.' },
          { userId: alice.id, source: 'shared', content: 'Alice sails on Sundays.' },
        ],
        uow,
      );
      // Before the commit (no job can have run): queued, not embedded, no request made.
      const r = await sql<{ queued: number; embedded: number }>`
        select (select count(*) from memory_embed_queue q join memory_chunks c on c.id = q.chunk_id
                where c.memory_id = any(${out.map((o) => o.id)}::bigint[]))::int as queued,
               (select count(*) from memory_embeddings e join memory_chunks c on c.id = e.chunk_id
                where c.memory_id = any(${out.map((o) => o.id)}::bigint[]))::int as embedded`.execute(trx);
      expect(r.rows[0]).toEqual({ queued: 2, embedded: 0 });
      return out;
    });
    expect(fake.embeddingRequests()).toHaveLength(0);
    await t.deps.jobs.drain(20_000);
    const chunks = await chunksOf(
      t,
      written.map((w) => w.id),
    );
    expect(chunks).toHaveLength(2);
    for (const c of chunks) {
      expect(c).toMatchObject({ model: 'fake-embed', dim: 64, queued: false });
      await expectStored(t, c.id, hashEmbedding(c.content, 64));
    }
    expect(fake.embeddingRequests()).toHaveLength(1);
  });

  it('leaves the chat exchange (deferEmbedding) to the next query request', async () => {
    const m = t.deps.services.memory;
    fake.reset();
    const [exchange] = await m.addMemories(
      [{ userId: alice.id, source: 'shared', content: 'Alice: is the ferry late?\nAssistant: ten minutes' }],
      undefined,
      { deferEmbedding: true },
    );
    await t.deps.jobs.drain(5_000);
    expect((await chunksOf(t, [exchange!.id]))[0]).toMatchObject({ queued: true, model: null });
    expect(await m.embedQuery('ferry', { includePending: true })).toHaveLength(64);
    expect((await chunksOf(t, [exchange!.id]))[0]).toMatchObject({ queued: false, model: 'fake-embed' });
    // One request: the query and the exchange together.
    expect(fake.embeddingRequests()).toHaveLength(1);
  });

  it('backs up the exchanges of a window with one delayed job, not one per exchange', async () => {
    const m = t.deps.services.memory;
    const jobs = () =>
      sql<{ n: number; delay: number }>`
        select count(*)::int as n, min(extract(epoch from start_after - now()))::float8 as delay
        from ${sql.table(`${t.deps.jobs.schema}.job`)}
        where name = 'memory.embed' and singleton_key = 'memory.deferred' and state = 'created'`.execute(
        t.deps.db,
      );
    const before = (await jobs()).rows[0]!.n;
    const exchanges = [];
    for (const line of ['Alice: hello\nAssistant: hi', 'Alice: the tide?\nAssistant: high at six'])
      exchanges.push(
        ...(await m.addMemories([{ userId: alice.id, source: 'shared', content: line }], undefined, {
          deferEmbedding: true,
        })),
      );
    const after = (await jobs()).rows[0]!;
    // One job per window: the two writes add none to the window's job, or one when a window
    // boundary falls between them (a job per exchange would add two).
    expect(after.n).toBeGreaterThanOrEqual(1);
    expect(after.n - before).toBeLessThanOrEqual(1);
    expect(after.delay).toBeGreaterThan(60);
    // Both still wait for a query request (or that job).
    for (const e of exchanges) expect((await chunksOf(t, [e.id]))[0]).toMatchObject({ queued: true });
  });
});
