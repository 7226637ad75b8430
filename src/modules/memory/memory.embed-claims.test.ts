// What a crash or a failure costs the embedding pipeline: at most the batch each worker had in
// flight. The model server is the fake (a real HTTP server) and counts every input it receives;
// the workers are the real embedding job (through pg-boss, retries included) and the chat turn's
// batched query request. A chunk some worker has sent is claimed until that worker writes it, so
// no other worker sends it meanwhile; a worker that died (its process stopped beating, or its
// claim lapsed) costs its one batch.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, isPostgres, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { NODE_TIMEOUT_SECONDS } from '../../platform/db/liveness.js';
import { hashEmbedding } from '../../platform/models/lexical-embedder.js';
import { HELD_SECONDS, MemoryEmbedding } from './memory.embedding.js';
import { EMBED_JOB } from './memory.jobs.js';

const BATCH = 4;

let fake: FakeModelServer;
let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ MODEL_MAX_RETRIES: '0', MEMORY_EMBED_BATCH: String(BATCH) }));
  alice = await createUser(t, 'public');
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

let written = 0;
/** `n` one-chunk memories waiting in the queue (a chat exchange's kind: no job sent now, its
 * backstop starts minutes later), in queue order; held by this process for its next query request
 * when they fit in it (BATCH - 1 chunks beside the query), else free for the job. */
async function queued(n: number): Promise<string[]> {
  const contents = Array.from(
    { length: n },
    () => `Note ${++written}: the lighthouse keeper counted ${written * 7} gulls today.`,
  );
  await t.deps.services.memory.addMemories(
    contents.map((content) => ({ userId: alice.id, source: 'shared' as const, content })),
    undefined,
    { deferEmbedding: true },
  );
  return contents;
}

/** How many times each text reached the model. */
function sends(inputs: string[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const s of inputs) n.set(s, (n.get(s) ?? 0) + 1);
  return n;
}

/** Runs the embedding job (as a memory write, a backstop or a follow-up would send it) until the
 * queues are idle, pg-boss's retries included. */
async function runJob() {
  await t.deps.jobs.enqueue(t.deps.db, EMBED_JOB, { memoryIds: [] });
  await t.deps.jobs.drain(30_000);
}

async function state(contents: string[]) {
  const r = await sql<{ content: string; embedded: boolean; queued: boolean }>`
    select c.content, exists (select 1 from memory_embeddings e where e.chunk_id = c.id) as embedded,
      exists (select 1 from memory_embed_queue q where q.chunk_id = c.id) as queued
    from memory_chunks c where c.content = any(${contents}::text[]) order by c.id`.execute(t.deps.db);
  return r.rows;
}

/** Queue entries under a claim. */
async function claimed(): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from memory_embed_queue where claimed_until is not null`.execute(t.deps.db);
  return r.rows[0]!.n;
}

/** The model fails the `at`-th embedding request it receives (counted from the last reset). */
function failRequest(at: number) {
  fake.embedWith((text) => {
    if (fake.embeddingRequests().length === at) throw new Error('the model went down');
    return Array.from(hashEmbedding(text, fake.embeddingDimensions));
  });
}

describe('embedding after a crash or a failure', () => {
  it("sends nothing twice but the batches in flight: a dead turn's chunks, a failed request's", async () => {
    // Three exchanges held by this process, nine more than one request takes along (free).
    const heldChunks = await queued(3);
    const contents = [...heldChunks, ...(await queued(9))];
    expect(await claimed()).toBe(3);

    // A chat turn's query request takes the three held chunks along, without reading the queue;
    // its process dies before the reply, so it never writes them.
    const turn = t.deps.services.memory.embedQueryBatched('who counted the gulls?', 3);
    expect(await turn.embedding).toHaveLength(fake.embeddingDimensions);
    const turnChunks = fake.embeddedInputs().slice(1);
    expect(turnChunks).toEqual(heldChunks);

    // The job: its second request fails (the model is down for that one call), pg-boss retries.
    failRequest(fake.embeddingRequests().length + 2);
    await runJob();
    const jobRequests = fake.embeddingRequests().slice(1);
    const batches = jobRequests.map((r) => r.body.input as string[]);
    const jobSends = sends(batches.flat());
    // The turn's chunks were never sent by the job while the turn held them.
    for (const c of turnChunks) expect(jobSends.get(c), c).toBeUndefined();
    // What the first request embedded was never sent again; the failed request's batch was sent
    // once more (the retry); every other chunk once.
    const [firstBatch, failedBatch] = batches;
    expect(firstBatch).toHaveLength(BATCH);
    for (const c of firstBatch!) expect(jobSends.get(c), c).toBe(1);
    for (const c of failedBatch!) expect(jobSends.get(c), c).toBe(2);
    for (const c of contents.filter((c) => !turnChunks.includes(c)))
      expect(jobSends.get(c), c).toBeGreaterThan(0);
    expect([...jobSends.values()].reduce((a, b) => a + b, 0)).toBe(contents.length - 3 + BATCH);

    // The turn's chunks wait under its claim, and a run is scheduled for when the claim is free:
    // on PostgreSQL by the time its process would count as dead unless it beats again, on the
    // embedded database (where the process can only die with the database) when the lease lapses.
    for (const row of await state(turnChunks)) expect(row).toMatchObject({ embedded: false, queued: true });
    const followUp = await sql<{ n: number; delay: number }>`
      select count(*)::int as n, min(extract(epoch from start_after - now()))::float8 as delay
      from ${sql.table(`${t.deps.jobs.schema}.job`)}
      where name = ${EMBED_JOB} and singleton_key = 'memory.claimed' and state = 'created'`.execute(
      t.deps.db,
    );
    expect(followUp.rows[0]!.n).toBeGreaterThanOrEqual(1);
    if (isPostgres()) expect(followUp.rows[0]!.delay).toBeLessThanOrEqual(NODE_TIMEOUT_SECONDS + 1);
    else expect(followUp.rows[0]!.delay).toBeGreaterThan(60);

    // The claim lapses (the time it takes, without waiting for it): the next run takes the dead
    // turn's batch, its one chunks sent twice.
    await sql`update memory_embed_queue set claimed_until = now() - interval '1 second'
      where claimed_until is not null`.execute(t.deps.db);
    const before = fake.embeddedInputs().length;
    await runJob();
    expect(sends(fake.embeddedInputs().slice(before))).toEqual(new Map(turnChunks.map((c) => [c, 1])));
    for (const row of await state(contents)) expect(row).toMatchObject({ embedded: true, queued: false });
  });

  it("a killed process's claims are free without waiting for their lease", async () => {
    const contents = await queued(3);
    // A chat turn of this process takes them along; it never writes them.
    const turn = t.deps.services.memory.embedQueryBatched('who keeps the lighthouse?', 3);
    await turn.embedding;
    expect(fake.embeddedInputs().slice(1)).toEqual(contents);
    // While this process lives (however slow), a run leaves them to it.
    await runJob();
    expect(fake.embeddedInputs().slice(4)).toEqual([]);

    // The process is killed: its claims name a process that stopped beating (on PostgreSQL its
    // row is older than the timeout, as after kill -9; on the embedded database a restarted
    // process deleted it). Their lease still has minutes to run.
    const dead = randomUUID();
    if (isPostgres())
      await sql`insert into service_nodes (id, beat_at)
        values (${dead}::uuid, now() - make_interval(secs => ${NODE_TIMEOUT_SECONDS + 1}))`.execute(
        t.deps.db,
      );
    const moved = await sql<{ lease: number }>`
      update memory_embed_queue set claimed_by = ${dead}::uuid where claimed_by = ${t.deps.liveness.id}::uuid
      returning extract(epoch from claimed_until - now())::float8 as lease`.execute(t.deps.db);
    expect(moved.rows).toHaveLength(3);
    for (const r of moved.rows) expect(r.lease).toBeGreaterThan(60);

    const before = fake.embeddedInputs().length;
    await runJob();
    expect(sends(fake.embeddedInputs().slice(before))).toEqual(new Map(contents.map((c) => [c, 1])));
    for (const row of await state(contents)) expect(row).toMatchObject({ embedded: true, queued: false });
  });

  it('two workers at once (two nodes, or a run and its retry) take different chunks', async () => {
    const contents = await queued(3 * BATCH);
    const memory = t.deps.services.memory;
    const done = await Promise.all([memory.embedPending([]), memory.embedPending([])]);
    expect(done[0] + done[1]).toBe(contents.length);
    expect(sends(fake.embeddedInputs())).toEqual(new Map(contents.map((c) => [c, 1])));
    for (const row of await state(contents)) expect(row).toMatchObject({ embedded: true, queued: false });
  });

  it('a failed request gives its chunks back at once', async () => {
    const contents = await queued(3);
    failRequest(1);
    const failed = t.deps.services.memory.embedQueryBatched('gulls?', 3);
    expect(await failed.embedding).toBeUndefined();
    expect(fake.embeddedInputs()).toEqual(['gulls?', ...contents]);
    expect(await claimed()).toBe(0);
    // Free again: the job takes them now, each sent once more than the failed request did.
    await runJob();
    expect(sends(fake.embeddedInputs().filter((s) => s !== 'gulls?'))).toEqual(
      new Map(contents.map((c) => [c, 2])),
    );
    for (const row of await state(contents)) expect(row).toMatchObject({ embedded: true, queued: false });
  });

  it('a held chunk goes along only in the first half of its claim, and only what fits is held', async () => {
    let now = 1_000_000;
    const e = new MemoryEmbedding(t.deps.db, t.deps.jobs, t.deps.models, t.deps.log, {
      vector: false,
      embedBatch: BATCH,
      claimHolder: t.deps.liveness.id,
      now: () => now,
    });
    // One request takes BATCH - 1 chunks beside the query: so many may be held, no more.
    expect(e.claimToHold(BATCH)).toBeUndefined();
    expect(e.claimToHold(BATCH - 1)).toEqual({ holder: t.deps.liveness.id, leaseSeconds: HELD_SECONDS });
    e.hold([{ memory: 0, content: 'held early' }], [-1], [-1]);
    expect(e.claimToHold(BATCH - 1)).toBeUndefined();
    now += (HELD_SECONDS * 1000) / 2 - 1;
    await e.embedQueryBatched('first question', 3).embedding;
    expect(fake.embeddedInputs()).toEqual(['first question', 'held early']);

    // Taken once; one held past half its claim is left to the job (the claim's holder is alive
    // until then, so nobody else sends it meanwhile, and no request that late could end in time).
    e.hold([{ memory: 0, content: 'held late' }], [-2], [-2]);
    now += (HELD_SECONDS * 1000) / 2 + 1;
    fake.reset();
    await e.embedQueryBatched('second question', 3).embedding;
    expect(fake.embeddedInputs()).toEqual(['second question']);
    expect(e.claimToHold(BATCH - 1)).toBeDefined();
  });
});
