// Memory benchmark (issue 3): seeds N memories over U users plus W world memories with the
// offline embedder, then measures on the embedded database (PGlite + pgvector) and on PostgreSQL
// (DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test when it answers; without pgvector
// there, so the sketch index with its int8 rerank; PGVECTOR=off runs PGlite on it too):
//   - ingest throughput (memories/s, through addMemories, until every embedding is stored: by
//     addMemories itself with the offline embedder, else by the jobs, drained), its ratio to a
//     plain batched INSERT of the same rows into a bare copy of the table, and the process's CPU
//     time per memory meanwhile (on PGlite that includes the database's worker thread);
//   - hybrid top-10 latency (query embedding + both sides + fusion + rerank), p50 / p95, and the
//     process's CPU time per search (on PGlite with the database's);
//   - recall@10 of the hybrid path's vector side against an exact float cosine scan computed here
//     in JS (and the same counting exact ties with the 10th best as right);
//   - retrieval quality against plain lexical search (ts_rank over the same chunks) on queries
//     whose answer is known: hit@10 and MRR.
// Run: npx tsx bench/memory.ts [--memories 100000] [--users 1000] [--world 5000] [--queries 200] [--db pglite,postgres] [--keep]
// --keep leaves the PostgreSQL data in the schema bench_keep (replaced on the next run), for EXPLAIN.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { dropSchema } from '../test/schema.js';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import * as search from '../src/modules/memory/memory.search.repository.js';
import type { AddMemoryInput } from '../src/modules/memory/memory.service.js';
import { cosine } from '../src/platform/models/lexical-embedder.js';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({
  options: {
    memories: { type: 'string', default: '100000' },
    users: { type: 'string', default: '1000' },
    world: { type: 'string', default: '5000' },
    queries: { type: 'string', default: '200' },
    db: { type: 'string', default: 'pglite,postgres' },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(values.memories);
const U = Number(values.users);
const W = Number(values.world);
const Q = Number(values.queries);

// A seeded generator, so both databases get the same data and queries.
let seed = 42;
const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)]!;

const NAMES = [
  'Alice',
  'Bruno',
  'Chiara',
  'Dmitri',
  'Esme',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kaito',
  'Lena',
  'Mateo',
  'Nadia',
  'Oskar',
  'Priya',
];
const ANIMALS = ['cat', 'dog', 'parrot', 'tortoise', 'rabbit', 'ferret', 'goldfish', 'hamster'];
const PETS = [
  'Pixel',
  'Biscuit',
  'Nimbus',
  'Pepper',
  'Waffles',
  'Juniper',
  'Comet',
  'Saffron',
  'Tofu',
  'Marble',
];
const INSTRUMENTS = ['cello', 'violin', 'piano', 'trumpet', 'banjo', 'harp', 'clarinet', 'drums'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const PLACES = [
  'Lisbon',
  'Kyoto',
  'Reykjavik',
  'Marrakesh',
  'Oslo',
  'Valparaiso',
  'Tbilisi',
  'Hobart',
  'Quito',
  'Tallinn',
];
const FOODS = [
  'dumplings',
  'paella',
  'ramen',
  'falafel',
  'pierogi',
  'tacos',
  'risotto',
  'curry',
  'pancakes',
  'goulash',
];
const HOBBIES = [
  'painting watercolours',
  'climbing boulders',
  'baking sourdough',
  'knitting scarves',
  'restoring bicycles',
  'growing tomatoes',
  'photographing birds',
  'writing poems',
];
const PRODUCTS = [
  'silver lanterns',
  'blue glass',
  'salted fish',
  'woven carpets',
  'clockwork toys',
  'amber jewellery',
  'spiced wine',
  'copper kettles',
];
const FILLER = [
  'It came up in passing.',
  'They seemed happy about it.',
  'This was a while ago.',
  'Worth remembering.',
  'They said it twice.',
  '',
];

interface Fact {
  content: string;
  /** A paraphrased question whose answer is this memory. */
  query: string;
}

function typo(w: string): string {
  if (w.length < 5) return w;
  const i = 1 + Math.floor(rnd() * (w.length - 3));
  return w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
}

function fact(): Fact {
  const n = pick(NAMES);
  switch (Math.floor(rnd() * 5)) {
    case 0: {
      const a = pick(ANIMALS);
      const p = pick(PETS);
      return {
        content: `${n} keeps a ${a} named ${p} at home. ${pick(FILLER)}`,
        query: `what is the name of ${n}'s ${a}s`,
      };
    }
    case 1: {
      const i = pick(INSTRUMENTS);
      const d = pick(DAYS);
      return {
        content: `${n} practises the ${i} every ${d} evening. ${pick(FILLER)}`,
        query: `which day does ${n} practice ${typo(i)}`,
      };
    }
    case 2: {
      const p = pick(PLACES);
      const f = pick(FOODS);
      return {
        content: `On the trip to ${p}, ${n} fell in love with the ${f}. ${pick(FILLER)}`,
        query: `${n} travelling ${p} favourite food`,
      };
    }
    case 3: {
      const h = pick(HOBBIES);
      return {
        content: `These days ${n} spends weekends ${h}. ${pick(FILLER)}`,
        query: `${n} weekend hobby ${typo(h.split(' ')[1]!)}`,
      };
    }
    default: {
      const f = pick(FOODS);
      const p = pick(PLACES);
      return {
        content: `${n} cannot stand ${f} since a bad night in ${p}. ${pick(FILLER)}`,
        query: `does ${n} dislike ${f}`,
      };
    }
  }
}

function worldFact(i: number): Fact {
  const p = pick(PLACES);
  const pr = pick(PRODUCTS);
  return {
    content: `In the realm, the market town of ${p} ${i} is known for its ${pr}.`,
    query: `${p} ${i} known for`,
  };
}

const pct = (sorted: number[], p: number) =>
  +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2);

async function postgresUrl(): Promise<string | undefined> {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await c.connect();
    await c.end();
    return url;
  } catch {
    return undefined;
  }
}

async function run(kind: 'pglite' | 'postgres') {
  seed = 42;
  const pgUrl = kind === 'postgres' ? await postgresUrl() : undefined;
  if (kind === 'postgres' && !pgUrl) {
    console.error('postgres: not reachable, skipped');
    return null;
  }
  const schema =
    kind !== 'postgres' ? undefined : values.keep ? 'bench_keep' : `bench_${randomBytes(4).toString('hex')}`;
  if (schema && values.keep) await dropSchema(pgUrl!, schema);
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-000',
    ...(pgUrl ? { DATABASE_URL: pgUrl } : embeddedDataDir()),
    DB_SCHEMA: schema,
    DB_POOL_SIZE: '4',
    DB_POOL_TIMEOUT_MS: '60000',
    MEMORY_EMBED_BATCH: '500',
    // PGVECTOR=off npx tsx bench/memory.ts: PGlite on the sketch index instead of pgvector.
    ...(process.env.PGVECTOR ? { PGVECTOR: process.env.PGVECTOR } : {}),
  });
  const deps: Deps = await createDeps(config);
  try {
    const memory = deps.services.memory;
    const db = deps.db;
    const t0 = performance.now();
    const users = (
      await sql<{
        id: number;
      }>`insert into users (email, name) select 'bench' || g || '@example.test', 'U' || g from generate_series(1, ${U}) g returning id`.execute(
        db,
      )
    ).rows.map((r) => r.id);
    const assistant = await deps.services.characters.assistantUserId();

    // The same rows for both ingest paths.
    const rows: (AddMemoryInput & { fact: Fact })[] = [];
    for (let i = 0; i < N; i++) {
      const f = fact();
      rows.push({ userId: users[i % U]!, source: 'shared', content: f.content, fact: f });
    }
    for (let i = 0; i < W; i++) {
      const f = worldFact(i);
      rows.push({ userId: assistant, source: 'world', content: f.content, fact: f });
    }
    const BATCH = 1000;

    // Baseline: plain batched INSERT into a bare copy of the table (same columns and indexes).
    await sql`create table bench_plain (like memories including all)`.execute(db);
    const p0 = performance.now();
    for (let i = 0; i < rows.length; i += BATCH) {
      await db
        .insertInto('bench_plain' as 'memories')
        .values(
          rows.slice(i, i + BATCH).map((r) => ({
            user_id: r.userId,
            content: r.content,
            source: r.source,
            tier: r.source === 'world' ? 'world' : 'shared',
            metadata: '{}',
          })),
        )
        .execute();
    }
    const plainSec = (performance.now() - p0) / 1000;
    await sql`drop table bench_plain`.execute(db);

    // Ours: addMemories (memory rows, chunks with tsvector and, with the offline embedder, their
    // embeddings; else the job; one transaction per batch), until every embedding is stored.
    const i0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < rows.length; i += BATCH)
      await memory.addMemories(rows.slice(i, i + BATCH).map(({ fact: _f, ...r }) => r));
    const insertedSec = (performance.now() - i0) / 1000;
    await deps.jobs.drain(30 * 60_000);
    const ingestSec = (performance.now() - i0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const embedded = await memory.embeddingStatus();
    // A bulk load leaves the visibility map unset (no index-only scans) and the statistics stale
    // until autovacuum comes by: measure the steady state a running service is in.
    for (const table of ['memories', 'memory_chunks', 'memory_embeddings'])
      await sql`vacuum analyze ${sql.table(table)}`.execute(db);
    // The import's pages written out now, not by a checkpoint running through the measurement.
    await sql`checkpoint`.execute(db);

    // Queries: paraphrases of a random user's memory (shared) or of a world memory.
    const idsByRow = (await db.selectFrom('memories').select(['id']).orderBy('id').execute()).map(
      (r) => r.id,
    );
    const queries = Array.from({ length: Q }, () => {
      const world = rnd() < 0.2;
      const idx = world ? N + Math.floor(rnd() * W) : Math.floor(rnd() * N);
      const r = rows[idx]!;
      return {
        userId: world ? users[Math.floor(rnd() * U)]! : r.userId,
        text: r.fact.query,
        target: idsByRow[idx]!,
      };
    });

    // Warm up, then time the hybrid path as the API runs it (query embedding included).
    for (const q of queries.slice(0, 10)) await memory.retrieve({ userId: q.userId }, q.text, 10);
    const lat: number[] = [];
    let hybridHits = 0;
    let hybridRR = 0;
    const searchCpu0 = process.cpuUsage();
    for (const q of queries) {
      const s = performance.now();
      const found = await memory.retrieve({ userId: q.userId }, q.text, 10);
      lat.push(performance.now() - s);
      const rank = found.findIndex((m) => m.id === q.target);
      if (rank >= 0) {
        hybridHits++;
        hybridRR += 1 / (rank + 1);
      }
    }
    const searchCpu = process.cpuUsage(searchCpu0);
    lat.sort((a, b) => a - b);

    // Plain lexical search on the same data and scope.
    const llat: number[] = [];
    let lexHits = 0;
    let lexRR = 0;
    for (const q of queries) {
      const s = performance.now();
      const found = await search.lexicalSearch(db, { userId: q.userId, text: q.text, limit: 10 });
      llat.push(performance.now() - s);
      const rank = found.findIndex((m) => m.memory_id === q.target);
      if (rank >= 0) {
        lexHits++;
        lexRR += 1 / (rank + 1);
      }
    }
    llat.sort((a, b) => a - b);

    // Recall@10 of the vector side against an exact scan computed here over the same scope.
    // `recallTies` counts a result as right when its exact similarity equals the 10th best's
    // (within float32 rounding): templated memories tie exactly, and which of the tied ones
    // makes the top 10 depends only on the order of float additions.
    // The service's own embedder (the configured offline one), as the stored embeddings were made.
    const embed = async (texts: string[]) => (await deps.models.embed(texts, 'bench')).embeddings;
    let recall = 0;
    let recallTies = 0;
    const R = Math.min(30, Q);
    for (const q of queries.slice(0, R)) {
      const qv = (await embed([q.text]))[0]!;
      const side = await search.searchChunks(db, {
        userId: q.userId,
        text: '',
        candidates: 10,
        index: memory.sketches ?? search.pgvectorIndex,
        embedding: { values: qv, model: deps.models.embeddingModel },
      });
      const got = new Set(side.filter((r) => r.distance !== null).map((r) => r.id));
      const scope = await db
        .selectFrom('memory_chunks')
        .select(['id', 'content'])
        .where((eb) => eb.or([eb('user_id', '=', q.userId), eb('tier', '=', 'world')]))
        .execute();
      const vectors = await embed(scope.map((c) => c.content));
      const ranked = scope
        .map((c, i) => ({ id: c.id, s: cosine(qv, vectors[i]!) }))
        .sort((a, b) => b.s - a.s);
      const exact = ranked.slice(0, 10);
      recall += exact.filter((e) => got.has(e.id)).length / exact.length;
      const tenth = exact.at(-1)!.s - 1e-6;
      recallTies +=
        Math.min(exact.length, ranked.filter((e) => e.s >= tenth && got.has(e.id)).length) / exact.length;
    }

    const result = {
      db: kind,
      vector: deps.database.capabilities.vector
        ? 'pgvector (exact scan)'
        : 'sketch index (in process) + int8 cosine rerank',
      memories: rows.length,
      chunks: embedded.total,
      embedded: embedded.current,
      ingestPerSec: Math.round(rows.length / ingestSec),
      insertOnlySec: +insertedSec.toFixed(1),
      ingestSec: +ingestSec.toFixed(1),
      ingestCpuUs: +((cpu.user + cpu.system) / rows.length).toFixed(1),
      plainInsertPerSec: Math.round(rows.length / plainSec),
      ingestRatio: +(plainSec / ingestSec).toFixed(2),
      hybridCpuUs: Math.round((searchCpu.user + searchCpu.system) / queries.length),
      hybridP50ms: pct(lat, 50),
      hybridP95ms: pct(lat, 95),
      lexicalP50ms: pct(llat, 50),
      lexicalP95ms: pct(llat, 95),
      vectorRecallAt10: +(recall / R).toFixed(3),
      vectorRecallAt10Ties: +(recallTies / R).toFixed(3),
      hybridHitAt10: +(hybridHits / Q).toFixed(3),
      hybridMRR: +(hybridRR / Q).toFixed(3),
      lexicalHitAt10: +(lexHits / Q).toFixed(3),
      lexicalMRR: +(lexRR / Q).toFixed(3),
      totalSec: +((performance.now() - t0) / 1000).toFixed(1),
    };
    console.error(JSON.stringify(result));
    return result;
  } finally {
    await deps.close();
    if (schema && pgUrl && !values.keep) await dropSchema(pgUrl, schema);
  }
}

const results = [];
for (const kind of values.db.split(',') as ('pglite' | 'postgres')[]) {
  const r = await run(kind);
  if (r) results.push(r);
}
console.table(results);
