// A failing model provider never loses a memory (issue 3, "Bad input"): the row stays, the
// embedding job records the failure and retries, and retrieval works through full text meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, eventually, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';

let fake: FakeModelServer;
let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ MODEL_MAX_RETRIES: '0' }));
  alice = await createUser(t, 'public');
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const chunkState = (memoryId: number) =>
  t.deps.db
    .selectFrom('memory_chunks as c')
    .leftJoin('memory_embeddings as e', 'e.chunk_id', 'c.id')
    .select(['e.model as embedding_model', 'e.dim as embedding_dim', 'c.embed_attempts', 'c.embed_error'])
    .where('c.memory_id', '=', memoryId)
    .executeTakeFirstOrThrow();

describe('memory with a failing model provider', () => {
  it('keeps the memory, retries the embedding and answers by full text meanwhile', async () => {
    // The embedding job's first run and the search's query embedding both fail.
    fake.failNext('embeddings', { status: 500, times: 2 });
    const r = await t.api('POST', '/api/assistant/memory', {
      token: alice.accessToken,
      body: { content: 'The spare key hides under the blue flowerpot.', source: 'shared' },
    });
    expect(r.status).toBe(201);
    const id = r.body.id as number;

    // Wait for the first (failed) attempt to be recorded on the chunk.
    await eventually(async () => expect((await chunkState(id)).embed_attempts).toBeGreaterThan(0));
    const failed = await chunkState(id);
    expect(failed).toMatchObject({ embedding_model: null, embed_attempts: 1 });
    expect(failed.embed_error).toContain('model provider failed');

    const found = await t.api(
      'GET',
      '/api/assistant/memory?query=' + encodeURIComponent('where is the spare key?'),
      { token: alice.accessToken },
    );
    expect(found.status).toBe(200);
    expect(found.body.memories[0]).toMatchObject({
      id,
      content: 'The spare key hides under the blue flowerpot.',
    });
    expect(found.body.memories[0].similarity).toBe(1);

    // pg-boss retries the job (after its backoff); the provider is back and the chunk gets its embedding.
    await eventually(async () => expect((await chunkState(id)).embedding_model).not.toBeNull(), {
      timeoutMs: 20_000,
    });
    await t.deps.jobs.drain(20_000);
    expect(await chunkState(id)).toMatchObject({
      embedding_model: 'fake-embed',
      embedding_dim: 64,
      embed_error: null,
    });
    await t.deps.models.flush();
    const calls = await t.deps.db
      .selectFrom('model_calls')
      .select(['purpose', 'outcome'])
      .where('kind', '=', 'embed')
      .orderBy('id')
      .execute();
    // The two failures asked for: the job's first run and the search's query embedding.
    expect(calls.filter((c) => c.outcome === 'error')).toHaveLength(2);
    expect(calls.at(-1)!.outcome).toBe('ok');

    const hybrid = await t.api('GET', '/api/assistant/memory?query=' + encodeURIComponent('spare key'), {
      token: alice.accessToken,
    });
    expect(hybrid.body.memories[0].id).toBe(id);
  });

  it('re-embeds in the background when the embedding model or size changed', async () => {
    const m = t.deps.services.memory;
    const mem = await m.addMemory({
      userId: alice.id,
      source: 'shared',
      content: 'Alice keeps bees behind the barn.',
    });
    await t.deps.jobs.drain(20_000);
    expect((await chunkState(mem.id)).embedding_model).toBe('fake-embed');
    // As if these embeddings had been made by the model configured before a restart.
    await t.deps.db.updateTable('memory_embeddings').set({ model: 'old-model' }).execute();
    fake.reset();
    // What createDeps runs at start: it notices and enqueues the re-embedding.
    await m.start();
    await t.deps.jobs.drain(20_000);
    expect((await chunkState(mem.id)).embedding_model).toBe('fake-embed');
    const stale = await t.deps.db
      .selectFrom('memory_embeddings')
      .select('chunk_id')
      .where('model', '<>', 'fake-embed')
      .execute();
    expect(stale).toHaveLength(0);
    // One batched request re-embedded everything.
    expect(fake.embeddingRequests()).toHaveLength(1);
  });
});
