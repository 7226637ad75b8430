// The in-process sketch index (no pgvector; PGVECTOR=off so PGlite runs it too): it picks exactly
// what a Hamming scan in SQL would and orders them by the cosine of the stored int8 embeddings,
// and every search sees every committed write, including those of a transaction that was still
// open at the index's previous read. Also: the int8 embeddings and migration 0017, which made
// them from the float32 ones stored before.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, isPostgres, type TestApp, type TestUser } from '../../../test/harness.js';
import { dropSchema } from '../../../test/schema.js';
import { openDatabase, transaction, type Trx } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { hashEmbedding, LEXICAL_EMBEDDING_MODEL } from '../../platform/models/lexical-embedder.js';
import { HammingKernel } from './memory.hamming.js';
import type { Scope } from './memory.search.repository.js';
import type { MemorySource } from './memory.rules.js';
import { SketchIndex, STALE_MS } from './memory.sketch-index.js';
import {
  cosineDistanceInt8,
  int8View,
  norm,
  quantize,
  SKETCH_BITS,
  sketchBytes,
  sketchLiteral,
} from './memory.sketch.js';

/** A stored embedding's int8 values (`e`) and chunk keys, as the tests read them. */
type StoredEmbedding = {
  chunk_id: number;
  e: Uint8Array;
  memory_id: number;
  chunk_index: number;
  conversation_id: number | null;
};

const TOPICS = ['kites', 'lanterns', 'ferries', 'orchards', 'foxes', 'cellars', 'bells', 'marshes'];
const text = (who: string, i: number) =>
  `${who} note ${i}: ${TOPICS[i % 8]} and ${TOPICS[(i * 5) % 8]} near the ${TOPICS[(i * 3) % 8]}, day ${i}.`;

describe('the Hamming kernel', () => {
  it('counts the differing bits of each sketch, across windows', () => {
    const bytes = SKETCH_BITS / 8;
    const count = 20_000; // more than one window of the kernel's memory
    const sketches = new Uint8Array(count * bytes);
    let seed = 7;
    for (let i = 0; i < sketches.length; i++) sketches[i] = seed = (seed * 1103515245 + 12345) & 0xff;
    const query = sketches.slice(5 * bytes, 6 * bytes);
    const out = new Uint16Array(count);
    new HammingKernel().distances(query, sketches, count, out);
    const popcount = (x: number) => x.toString(2).replace(/0/g, '').length;
    for (const i of [0, 1, 5, 16_383, 16_384, 19_999]) {
      let d = 0;
      for (let b = 0; b < bytes; b++) d += popcount(sketches[i * bytes + b]! ^ query[b]!);
      expect(out[i], `sketch ${i}`).toBe(d);
    }
    expect(out[5]).toBe(0);
  });
});

describe('the sketch index', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let npc: TestUser;
  let assistant: number;
  let index: SketchIndex;

  /** `count` memories of `source` for `userId`, their text naming `who`. */
  const seed = (userId: number, source: MemorySource, who: string, count: number) =>
    t.deps.services.memory.addMemories(
      Array.from({ length: count }, (_, i) => ({ userId, source, content: text(who, i) })),
    );

  beforeAll(async () => {
    // The index's mechanics, on the lexical embedder (its embeddings are made here to compare).
    t = await createTestApp({ PGVECTOR: 'off', OFFLINE_EMBEDDING_MODEL: LEXICAL_EMBEDDING_MODEL });
    expect(t.deps.database.capabilities.vector).toBe(false);
    index = t.deps.services.memory.sketches!;
    [alice, bob, npc] = await Promise.all([
      createUser(t, 'public'),
      createUser(t, 'public'),
      createUser(t, 'public'),
    ]);
    assistant = await t.deps.services.characters.assistantUserId();
    await seed(alice.id, 'shared', 'Alice', 60);
    await seed(alice.id, 'vision_analysis', 'Seen', 12);
    await seed(bob.id, 'shared', 'Bob', 30);
    await seed(assistant, 'world', 'World', 25);
    await seed(npc.id, 'core_belief', 'Npc', 15);
    // The NPC's own shared memories are not part of anyone else's scope.
    await seed(npc.id, 'shared', 'Npc private', 1);
  });
  afterAll(() => t.close());

  const QUERY = 'foxes and orchards near the bells';

  /** The same ranking by a Hamming scan in SQL (what the service ran before the index), its
   * `count` nearest ordered by the cosine of their stored int8 embeddings. */
  async function scanInSql(s: Scope, query: string, count: number) {
    const npcPart =
      s.npcUserId !== undefined ? sql` or (e.user_id = ${s.npcUserId} and e.tier = 'assistant_core')` : sql``;
    const source = s.source ? sql` and e.source = ${s.source}` : sql``;
    const r = await sql<StoredEmbedding>`
      select e.chunk_id, e.embedding_i8 as e, c.memory_id, c.chunk_index, c.conversation_id
      from memory_embeddings e join memory_chunks c on c.id = e.chunk_id
      where (e.user_id = ${s.userId} or e.tier = 'world'${npcPart})${source}
        and e.model = ${LEXICAL_EMBEDDING_MODEL} and e.dim = 384
      order by bit_count(e.sketch # ${sketchLiteral(hashEmbedding(query))}::varbit), e.chunk_id
      limit ${count}`.execute(t.deps.db);
    const q = hashEmbedding(query);
    return r.rows
      .map((row) => ({
        id: Number(row.chunk_id),
        memory_id: Number(row.memory_id),
        chunk_index: row.chunk_index,
        conversation_id: row.conversation_id === null ? null : Number(row.conversation_id),
        distance: cosineDistanceInt8(q, norm(q), int8View(row.e)),
      }))
      .sort((a, b) => a.distance - b.distance || a.id - b.id);
  }

  /** The index's answer with a pool as large as the count: the same chunks as the scan. */
  const ask = (own: SketchIndex, s: Scope, query: string, count: number) =>
    own.nearest(t.deps.db, {
      ...s,
      model: LEXICAL_EMBEDDING_MODEL,
      dim: 384,
      query: hashEmbedding(query),
      pool: count,
      count,
    });
  const nearest = (s: Scope, query: string, count: number) => ask(index, s, query, count);

  it('ranks each scope exactly as a Hamming scan in SQL', async () => {
    const scopes: Scope[] = [
      { userId: alice.id },
      { userId: alice.id, npcUserId: npc.id },
      { userId: alice.id, source: 'vision_analysis' },
      { userId: bob.id, npcUserId: npc.id },
      { userId: assistant },
      { userId: npc.id },
    ];
    for (const s of scopes) {
      for (const count of [10, 50, 500]) {
        const got = await nearest(s, QUERY, count);
        expect(got, JSON.stringify({ s, count })).toEqual(await scanInSql(s, QUERY, count));
      }
    }
    // Another model or size finds nothing.
    expect(
      await index.nearest(t.deps.db, {
        userId: alice.id,
        model: 'other',
        dim: 384,
        query: hashEmbedding(QUERY),
        pool: 10,
        count: 10,
      }),
    ).toEqual([]);
  });

  it('reranks a pool of the sketch-nearest by cosine and returns the count asked', async () => {
    const s = { userId: alice.id, npcUserId: npc.id };
    const pool = await nearest(s, QUERY, 40);
    const got = await index.nearest(t.deps.db, {
      ...s,
      model: LEXICAL_EMBEDDING_MODEL,
      dim: 384,
      query: hashEmbedding(QUERY),
      pool: 40,
      count: 10,
    });
    expect(got).toEqual(pool.slice(0, 10));
  });

  it('sees memories written, edited and deleted since its last read', async () => {
    const m = t.deps.services.memory;
    const carol = await createUser(t, 'public');
    const scope = { userId: carol.id };
    await seed(carol.id, 'shared', 'Carol', 20);
    expect(await nearest(scope, QUERY, 500)).toEqual(await scanInSql(scope, QUERY, 500));

    // Written by another node or request since: read as rows newer than the horizon.
    const [added] = await m.addMemories([
      { userId: carol.id, source: 'shared', content: 'Foxes and orchards near the bells, said Carol.' },
    ]);
    const after = await nearest(scope, QUERY, 500);
    expect(after).toEqual(await scanInSql(scope, QUERY, 500));
    expect(after).toHaveLength(20 + 1 + 25);

    // An edit re-chunks and re-embeds: the new chunk is read as new, the old one's tombstone drops it.
    await m.patchOwn(carol.id, added!.id, { content: 'Cellars and marshes, said Carol.' });
    expect(await nearest(scope, QUERY, 500)).toEqual(await scanInSql(scope, QUERY, 500));
    // Moved into a conversation: new chunks again, with the conversation among their keys.
    const conversation = await t.deps.services.conversations.create(carol.id, {});
    await m.patchOwn(carol.id, added!.id, { metadata: { conversationId: conversation.id } });
    const moved = await nearest(scope, QUERY, 500);
    expect(moved).toEqual(await scanInSql(scope, QUERY, 500));
    expect(moved.find((n) => n.memory_id === added!.id)!.conversation_id).toBe(conversation.id);

    // An embedding rewritten in place (re-embedding by another model): its new model is seen.
    await t.deps.db
      .updateTable('memory_embeddings')
      .set({ model: 'old-model' })
      .where('user_id', '=', carol.id)
      .execute();
    expect(await nearest(scope, QUERY, 500)).toEqual(await scanInSql(scope, QUERY, 500));
    expect(await nearest(scope, QUERY, 500)).toHaveLength(25);
    await t.deps.db
      .updateTable('memory_embeddings')
      .set({ model: LEXICAL_EMBEDDING_MODEL })
      .where('user_id', '=', carol.id)
      .execute();
    expect(await nearest(scope, QUERY, 500)).toEqual(await scanInSql(scope, QUERY, 500));

    // Deleted: their tombstones drop them at the next read.
    const { memories: rows } = await m.listOwn(carol.id, { limit: 100, offset: 0 });
    for (const r of rows.slice(0, 15)) await m.deleteOwn(carol.id, r.id);
    const held = index.stats().rows;
    const left = await nearest(scope, QUERY, 500);
    expect(left).toEqual(await scanInSql(scope, QUERY, 500));
    expect(left).toHaveLength(rows.length - 15 + 25);
    expect(index.stats().rows).toBe(held - 15);
    const hits = await m.retrieve(scope, 'zzzz-no-word-matches', 50, {});
    expect(new Set(hits.map((h) => h.userId))).toEqual(new Set([carol.id, assistant]));
    expect(hits).toHaveLength(Math.min(50, rows.length - 15 + 25));
  });

  it('sees a write whose transaction was open during its previous read', async () => {
    const m = t.deps.services.memory;
    const dave = await createUser(t, 'public');
    const scope = { userId: dave.id };
    await m.addMemories([{ userId: dave.id, source: 'shared', content: text('Dave', 1) }]);
    await nearest(scope, QUERY, 100);

    // A transaction writes a memory (its embedding gets the transaction's id) and stays open.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let opened!: (trx: Trx) => void;
    const open = new Promise<Trx>((r) => (opened = r));
    const late = transaction(t.deps.db, async (uow) => {
      const { trx } = uow;
      await m.addMemories(
        [{ userId: dave.id, source: 'shared', content: 'Foxes and bells, the late one.' }],
        uow,
      );
      opened(trx);
      await held;
    });
    await open;
    const count = async () =>
      Number(
        (
          await t.deps.db
            .selectFrom('memory_embeddings')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('user_id', '=', dave.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    if (isPostgres()) {
      // Meanwhile another transaction writes and commits, and a search reads: it sees that one
      // but not the open one, and moves its horizon no further than the open transaction.
      await m.addMemories([
        { userId: dave.id, source: 'shared', content: 'Foxes and orchards, the early one.' },
      ]);
      const during = await nearest(scope, QUERY, 100);
      expect(during).toEqual(await scanInSql(scope, QUERY, 100));
      expect(during).toHaveLength(2 + 25);
      release();
      await late;
      expect(await count()).toBe(3);
      const after = await nearest(scope, QUERY, 100);
      expect(after).toEqual(await scanInSql(scope, QUERY, 100));
      expect(after).toHaveLength(3 + 25);
    } else {
      // PGlite has one connection: the search waits for the open transaction and sees its write.
      const during = nearest(scope, QUERY, 100);
      release();
      await late;
      expect(await during).toHaveLength(2 + 25);
      expect(await count()).toBe(2);
    }
  });

  it('reads a part whole when it has not read it for STALE_MS', async () => {
    let clock = 0;
    const own = new SketchIndex({ maxBytes: 1 << 30, now: () => clock });
    const erin = await createUser(t, 'public');
    const scope = { userId: erin.id };
    const [gone] = await seed(erin.id, 'shared', 'Erin', 10);
    const search = () => ask(own, scope, QUERY, 500);
    await search();
    const held = own.stats().rows;
    // Deleted, and its tombstone swept before the index read it (as for a part idle a day).
    await t.deps.services.memory.deleteOwn(erin.id, gone!.id);
    await sql`delete from memory_embeddings_gone where user_id = ${erin.id}`.execute(t.deps.db);
    clock = STALE_MS - 1;
    await search();
    expect(own.stats().rows).toBe(held);
    // Not read for STALE_MS: read whole.
    clock = 2 * STALE_MS;
    expect(await search()).toEqual(await scanInSql(scope, QUERY, 500));
    expect(own.stats().rows).toBe(held - 1);
  });

  it('keeps tombstones for TOMBSTONE_HOURS (the maintenance sweep)', async () => {
    const frank = await createUser(t, 'public');
    await sql`insert into memory_embeddings_gone (chunk_id, user_id, tier, gone_at) values
      (-1, ${frank.id}, 'shared', now() - interval '25 hours'),
      (-2, ${frank.id}, 'shared', now() - interval '23 hours')`.execute(t.deps.db);
    await t.deps.services.memory.sweep();
    const left = await sql<{ chunk_id: number }>`
      select chunk_id from memory_embeddings_gone where user_id = ${frank.id}`.execute(t.deps.db);
    expect(left.rows.map((r) => Number(r.chunk_id))).toEqual([-2]);
  });

  it('evicts the least recently used parts beyond its size, and reads them again', async () => {
    const small = new SketchIndex({ maxBytes: 1 });
    const search = (userId: number) => ask(small, { userId }, QUERY, 500);
    expect(await search(alice.id)).toEqual(await scanInSql({ userId: alice.id }, QUERY, 500));
    expect(small.stats().parts).toBe(1);
    expect(await search(bob.id)).toEqual(await scanInSql({ userId: bob.id }, QUERY, 500));
    expect(await search(alice.id)).toEqual(await scanInSql({ userId: alice.id }, QUERY, 500));
    expect(small.stats().parts).toBe(1);
  });

  it('stays on the fallback when migrated again with pgvector allowed', async () => {
    await migrate(t.deps.database, { pgvector: true });
    expect(t.deps.database.capabilities.vector).toBe(false);
  });

  it('keeps sketches and int8 embeddings of the same bytes the database stores', async () => {
    const r = await sql<{ sketch: Uint8Array; e: Uint8Array; content: string }>`
      select substring(varbit_send(e.sketch) from 5) as sketch, e.embedding_i8 as e, c.content
      from memory_embeddings e join memory_chunks c on c.id = e.chunk_id
      where c.user_id = ${alice.id} order by c.id limit 1`.execute(t.deps.db);
    const row = r.rows[0]!;
    const embedding = hashEmbedding(row.content);
    expect(Buffer.from(row.sketch)).toEqual(Buffer.from(sketchBytes(embedding)));
    expect(Buffer.from(row.e)).toEqual(Buffer.from(quantize(embedding).buffer));
  });
});

describe('int8 embeddings', () => {
  it('scale the largest magnitude to 127, rounding half away from zero', () => {
    expect(Array.from(quantize([127, 0.5, -1.5, 2.5, 0, -127, 1e-40, -63.5]))).toEqual([
      127, 1, -2, 3, 0, -127, 0, -64,
    ]);
    expect(Array.from(quantize([0, 0, 0]))).toEqual([0, 0, 0]);
    expect(Array.from(quantize([-0.2, 0.1, Number.NaN]))).toEqual([-127, 64, 0]);
  });

  it('keep the cosine of the offline embeddings within 0.01', () => {
    const texts = Array.from({ length: 40 }, (_, i) => text(`Who${i % 5}`, i));
    const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
      let dot = 0;
      for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
      return 1 - dot / (norm(a) * norm(b));
    };
    const q = hashEmbedding('foxes and orchards near the bells');
    for (const t of texts) {
      const e = hashEmbedding(t);
      expect(Math.abs(cosineDistanceInt8(q, norm(q), quantize(e)) - cosine(q, e))).toBeLessThan(0.01);
    }
  });
});

describe('migration 0017', () => {
  it('converts the stored float32 embeddings into the int8 values quantize makes', async () => {
    const schema = isPostgres() ? `t_${randomBytes(6).toString('hex')}` : undefined;
    const database = await openDatabase({
      url: process.env.DATABASE_URL ?? 'memory://',
      dataDir: '',
      poolSize: 2,
      poolTimeoutMs: 10_000,
      schema,
    });
    try {
      await migrate(database, { pgvector: false, until: '0016_memory_sketch_index' });
      const vectors = [
        [127, 0.5, -1.5, 2.5, 0, -127, 1e-40, -63.5],
        [0, 0, 0, 0],
        Array.from(hashEmbedding('foxes and orchards near the bells')),
      ];
      const float32 = (v: number[]) => Buffer.from(Float32Array.from(v).buffer);
      const user = await sql<{ id: number }>`insert into users (name) values ('M') returning id`.execute(
        database.db,
      );
      const memory = await sql<{ id: number }>`insert into memories (user_id, content, source, tier)
        values (${user.rows[0]!.id}, 'm', 'shared', 'shared') returning id`.execute(database.db);
      const memoryId = Number(memory.rows[0]!.id);
      for (const [n, chunkId] of [1, 2, 3, 9].entries())
        await sql`insert into memory_chunks (id, memory_id, user_id, tier, source, conversation_id, chunk_index, content)
          overriding system value
          values (${chunkId}, ${memoryId}, ${user.rows[0]!.id}, 'shared', 'shared', ${chunkId === 2 ? 77 : null}, ${n}, 'm')`.execute(
          database.db,
        );
      for (const [i, v] of vectors.entries()) {
        await sql`insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, sketch)
          values (${i + 1}, 1, 'shared', 'shared', 'm', ${v.length}, ${sketchLiteral(v)}::varbit)`.execute(
          database.db,
        );
        await sql`insert into memory_embedding_vectors (chunk_id, embedding) values (${i + 1}, ${float32(v)})`.execute(
          database.db,
        );
      }
      // An embedding whose float32 row is missing is made again.
      await sql`insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, sketch)
        values (9, 1, 'shared', 'shared', 'm', 4, ${sketchLiteral([1, 0, 0, 0])}::varbit)`.execute(
        database.db,
      );

      const { applied } = await migrate(database, { pgvector: false });
      expect(applied[0]).toBe('0017_memory_int8');
      const r = await sql<StoredEmbedding>`
        select chunk_id, embedding_i8 as e, memory_id, chunk_index, conversation_id
        from memory_embeddings order by chunk_id`.execute(database.db);
      expect(
        r.rows.map((row) => [row.chunk_id, row.memory_id, row.chunk_index, row.conversation_id].map(Number)),
      ).toEqual([
        [1, memoryId, 0, 0],
        [2, memoryId, 1, 77],
        [3, memoryId, 2, 0],
      ]);
      for (const [i, v] of vectors.entries())
        expect(Array.from(int8View(r.rows[i]!.e))).toEqual(Array.from(quantize(Float32Array.from(v))));
      const queued = await sql<{ chunk_id: number }>`select chunk_id from memory_embed_queue`.execute(
        database.db,
      );
      expect(queued.rows.map((row) => Number(row.chunk_id))).toEqual([9]);
      const gone = await sql<{
        t: string | null;
      }>`select to_regclass('memory_embedding_vectors')::text as t`.execute(database.db);
      expect(gone.rows[0]!.t).toBeNull();
    } finally {
      await database.close();
      if (schema) await dropSchema(process.env.DATABASE_URL!, schema);
    }
  });
});
