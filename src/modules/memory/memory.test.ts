// Memory endpoints and retrieval on the real app and database (both lanes: pgvector on PGlite,
// the real[] exact scan on Postgres), with the offline embedder.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { SEMANTIC_EMBEDDING_MODEL } from '../../platform/models/semantic-embedder.js';

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;
let npc: TestUser;

const MAX = 2048;

beforeAll(async () => {
  t = await createTestApp({
    MEMORY_MAX_CONTENT: String(MAX),
    MEMORY_CHUNK_SIZE: '300',
    MEMORY_CHUNK_OVERLAP: '60',
  });
  [alice, bob, admin, npc] = await Promise.all([
    createUser(t, 'public'),
    createUser(t, 'public'),
    createUser(t, 'cso'),
    createUser(t, 'npc', { name: 'Mira' }),
  ]);
});
afterAll(() => t.close());

const count = async () =>
  Number((await sql<{ n: number }>`select count(*)::int as n from memories`.execute(t.deps.db)).rows[0]!.n);

async function post(user: TestUser, body: unknown) {
  return t.api('POST', '/api/assistant/memory', { token: user.accessToken, body });
}

describe('POST /api/assistant/memory', () => {
  it('rejects bad input with problem+json and stores nothing', async () => {
    const before = await count();
    const cases: unknown[] = [
      { content: 'x', source: 'gossip' },
      { content: '', source: 'shared' },
      { content: '   \n ', source: 'shared' },
      { content: 'é'.repeat(MAX / 2 + 1), source: 'shared' },
      { source: 'shared' },
      { content: 42, source: 'shared' },
      { content: 'ok', source: 'shared', extra: true },
      { content: 'ok', source: 'shared', metadata: { conversationId: 'abc' } },
      { content: 'ok', source: 'shared', userId: -3 },
    ];
    for (const body of cases) {
      const r = await post(alice, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors.length).toBeGreaterThan(0);
    }
    const bad = await t.api('POST', '/api/assistant/memory', { token: alice.accessToken, body: '{not json' });
    expect(bad.status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('needs an access token', async () => {
    const r = await t.api('POST', '/api/assistant/memory', { body: { content: 'x', source: 'shared' } });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
  });

  it('lets a player write shared memories for themselves only', async () => {
    const ok = await post(alice, {
      content: 'My cat is called Pixel.',
      source: 'shared',
      metadata: { conversationId: 7, playerName: 'Alice' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      userId: alice.id,
      source: 'shared',
      tier: 'shared',
      content: 'My cat is called Pixel.',
      metadata: { conversationId: 7 },
      conversationId: 7,
    });
    expect(typeof ok.body.id).toBe('number');
    expect(new Date(ok.body.createdAt).toISOString()).toBe(ok.body.createdAt);

    const before = await count();
    for (const body of [
      { content: 'x', source: 'world' },
      { content: 'x', source: 'assistant_core' },
      { content: 'x', source: 'vision_analysis' },
      { content: 'x', source: 'shared', userId: bob.id },
    ]) {
      const r = await post(alice, body);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    expect(await count()).toBe(before);
  });

  it('gives world memories to the assistant and core memories to characters (admin)', async () => {
    const assistantId = await t.deps.services.characters.assistantUserId();
    const world = await post(admin, {
      content: 'The capital of the realm is Lumen.',
      source: 'world',
      userId: alice.id,
    });
    expect(world.status).toBe(201);
    expect(world.body).toMatchObject({ userId: assistantId, tier: 'world' });

    const core = await post(admin, {
      content: 'Mira distrusts the harbour guild.',
      source: 'core_belief',
      userId: npc.id,
    });
    expect(core.body).toMatchObject({ userId: npc.id, source: 'core_belief', tier: 'assistant_core' });

    const assistantCore = await post(admin, {
      content: 'I value honesty above comfort.',
      source: 'assistant_core',
    });
    expect(assistantCore.body).toMatchObject({ userId: assistantId, tier: 'assistant_core' });

    const vision = await post(admin, {
      content: 'The photo shows a red kite.',
      source: 'vision_analysis',
      userId: bob.id,
    });
    expect(vision.body).toMatchObject({ userId: bob.id, tier: 'shared' });

    const notCharacter = await post(admin, { content: 'x', source: 'assistant_core', userId: alice.id });
    expect(notCharacter.status).toBe(400);
    const noUser = await post(admin, { content: 'x', source: 'shared', userId: 987654321 });
    expect(noUser.status).toBe(400);
  });

  it('splits long content into overlapping chunks and embeds them in the background', async () => {
    const sentences = Array.from(
      { length: 30 },
      (_, i) => `Fact number ${i} is about lighthouse keeper ${i}.`,
    );
    const r = await post(alice, { content: sentences.join(' '), source: 'shared' });
    expect(r.status).toBe(201);
    await t.deps.jobs.drain(20_000);
    const chunks = await t.deps.db
      .selectFrom('memory_chunks as c')
      .leftJoin('memory_embeddings as e', 'e.chunk_id', 'c.id')
      .select(['c.chunk_index', 'c.content', 'e.model as embedding_model', 'e.dim as embedding_dim'])
      .where('c.memory_id', '=', r.body.id)
      .orderBy('c.chunk_index')
      .execute();
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(300);
      expect(c.embedding_model).toBe(SEMANTIC_EMBEDDING_MODEL);
      expect(c.embedding_dim).toBe(384);
    }
    // Neighbouring chunks share text (the overlap), and every sentence is whole in some chunk.
    const tail = chunks[0]!.content.slice(-30);
    expect(chunks[1]!.content).toContain(tail.slice(tail.indexOf(' ') + 1));
    for (const s of sentences) expect(chunks.some((c) => c.content.includes(s))).toBe(true);
  });
});

describe('GET /api/assistant/memory', () => {
  beforeAll(async () => {
    const m = t.deps.services.memory;
    await m.addMemory({
      userId: alice.id,
      source: 'shared',
      content: 'Alice is allergic to peanuts and avoids satay.',
    });
    await m.addMemory({
      userId: alice.id,
      source: 'shared',
      content: 'Alice plays the cello in a quartet on Sundays.',
    });
    await m.addMemory({
      userId: bob.id,
      source: 'shared',
      content: 'Bob is allergic to peanuts too, and to cats.',
    });
    await m.addMemory({ userId: bob.id, source: 'shared', content: 'Bob secretly collects antique maps.' });
    await t.deps.jobs.drain(20_000);
  });

  it('ranks by fused relevance in [0, 1], with the world tier, never another player', async () => {
    const r = await t.api(
      'GET',
      '/api/assistant/memory?query=' + encodeURIComponent('what is Alice allergic to?'),
      { token: alice.accessToken },
    );
    expect(r.status).toBe(200);
    const ms = r.body.memories as { userId: number; content: string; similarity: number; source: string }[];
    expect(ms[0]!.content).toContain('peanuts');
    expect(ms[0]!.userId).toBe(alice.id);
    for (const m of ms) {
      expect(m.similarity).toBeGreaterThanOrEqual(0);
      expect(m.similarity).toBeLessThanOrEqual(1);
      expect(m.userId).not.toBe(bob.id);
    }
    expect(ms.map((m) => m.similarity)).toEqual([...ms.map((m) => m.similarity)].sort((a, b) => b - a));

    const world = await t.api('GET', '/api/assistant/memory?query=capital%20realm', {
      token: bob.accessToken,
    });
    expect(world.body.memories[0].content).toContain('Lumen');
    expect(world.body.memories.every((m: { userId: number }) => m.userId !== alice.id)).toBe(true);
    const maps = await t.api('GET', '/api/assistant/memory?query=antique%20maps', {
      token: alice.accessToken,
    });
    expect(maps.body.memories.some((m: { content: string }) => m.content.includes('maps'))).toBe(false);
  });

  it("includes an NPC's core tier only when asked", async () => {
    const without = await t.api('GET', '/api/assistant/memory?query=harbour%20guild', {
      token: alice.accessToken,
    });
    expect(without.body.memories.some((m: { content: string }) => m.content.includes('harbour'))).toBe(false);
    const withNpc = await t.api('GET', `/api/assistant/memory?query=harbour%20guild&npcUserId=${npc.id}`, {
      token: alice.accessToken,
    });
    expect(withNpc.body.memories[0].content).toContain('harbour');
    const source = await t.api('GET', `/api/assistant/memory?query=guild&npcUserId=${npc.id}&source=shared`, {
      token: alice.accessToken,
    });
    expect(source.body.memories.every((m: { source: string }) => m.source === 'shared')).toBe(true);
  });

  it('returns `limit` rows when that many exist (exact per-user scan), newest first without a query', async () => {
    const m = t.deps.services.memory;
    const carol = await createUser(t, 'public');
    await m.addMemories(
      Array.from({ length: 15 }, (_, i) => ({
        userId: carol.id,
        source: 'shared' as const,
        content: `Carol note ${i}: tea with lemon`,
      })),
    );
    await t.deps.jobs.drain(20_000);
    const r = await t.api('GET', '/api/assistant/memory?query=tea%20lemon&limit=12&source=shared', {
      token: carol.accessToken,
    });
    expect(r.body.memories).toHaveLength(12);
    const newest = await t.api('GET', '/api/assistant/memory?limit=3&source=shared', {
      token: carol.accessToken,
    });
    expect(newest.body.memories.map((x: { content: string }) => x.content)).toEqual([
      'Carol note 14: tea with lemon',
      'Carol note 13: tea with lemon',
      'Carol note 12: tea with lemon',
    ]);
    expect(newest.body.memories[0].similarity).toBeNull();
    const dflt = await t.api('GET', '/api/assistant/memory?query=tea', { token: carol.accessToken });
    expect(dflt.body.memories).toHaveLength(10);
  });

  it('rejects bad limits and ids, and another user for non-admins', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'userId=abc', 'npcUserId=-1', 'source=gossip']) {
      const r = await t.api('GET', `/api/assistant/memory?${q}`, { token: alice.accessToken });
      expect(r.status, q).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const other = await t.api('GET', `/api/assistant/memory?userId=${bob.id}`, { token: alice.accessToken });
    expect(other.status).toBe(403);
    const asAdmin = await t.api('GET', `/api/assistant/memory?userId=${bob.id}&query=maps`, {
      token: admin.accessToken,
    });
    expect(asAdmin.body.memories[0].content).toContain('maps');
    expect((await t.api('GET', '/api/assistant/memory')).status).toBe(401);
  });
});

describe('GET /api/admin/memories', () => {
  it('lists any user for admins only, with paging', async () => {
    expect((await t.api('GET', '/api/admin/memories', { token: alice.accessToken })).status).toBe(403);
    expect((await t.api('GET', '/api/admin/memories')).status).toBe(401);
    const r = await t.api('GET', `/api/admin/memories?userId=${bob.id}&limit=1&offset=0`, {
      token: admin.accessToken,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ limit: 1, offset: 0 });
    expect(r.body.total).toBeGreaterThanOrEqual(3);
    expect(r.body.memories).toHaveLength(1);
    expect(r.body.memories[0].userId).toBe(bob.id);
    for (const q of ['limit=201', 'offset=-1', 'userId=x', 'source=nope'])
      expect((await t.api('GET', `/api/admin/memories?${q}`, { token: admin.accessToken })).status).toBe(400);
  });
});

describe('PATCH and DELETE /api/admin/memories/:id', () => {
  it("edits and forgets anyone's memory for admins only; others and unknown ids are refused", async () => {
    const body = { content: 'Mira learnt smithing from her mother.' };
    const created = await post(admin, {
      content: 'Mira learnt smithing.',
      source: 'core_belief',
      userId: npc.id,
    });
    const id = created.body.id as number;
    const path = `/api/admin/memories/${id}`;
    const of = async () =>
      (await t.api('GET', `/api/admin/memories?userId=${npc.id}`, { token: admin.accessToken })).body
        .memories;
    for (const m of ['PATCH', 'DELETE'] as const)
      expect((await t.api(m, path, { token: alice.accessToken, body })).status).toBe(403);
    expect((await t.api('PATCH', path, { token: admin.accessToken, body: {} })).status).toBe(400);
    const edited = await t.api('PATCH', path, { token: admin.accessToken, body });
    expect(edited.body).toMatchObject({ id, userId: npc.id, content: body.content, tier: 'assistant_core' });
    expect((await of()).find((m: { id: number }) => m.id === id).content).toBe(body.content);
    for (const want of [204, 404])
      expect((await t.api('DELETE', path, { token: admin.accessToken })).status).toBe(want);
    expect((await t.api('PATCH', path, { token: admin.accessToken, body })).status).toBe(404);
    expect((await of()).some((m: { id: number }) => m.id === id)).toBe(false);
  });
});

describe('own memories (/api/memories)', () => {
  it('lists, reads, edits (re-embedding), exports and forgets only the caller’s memories', async () => {
    const created = await post(bob, { content: 'Bob parks his bike by the old mill.', source: 'shared' });
    const id = created.body.id as number;
    await t.deps.jobs.drain(20_000);

    const list = await t.api('GET', '/api/memories?limit=2', { token: bob.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.memories).toHaveLength(2);
    expect(list.body.memories.every((m: { userId: number }) => m.userId === bob.id)).toBe(true);

    expect((await t.api('GET', `/api/memories/${id}`, { token: bob.accessToken })).body.content).toContain(
      'mill',
    );
    // Another user's memory does not exist for the caller, on every route.
    expect((await t.api('GET', `/api/memories/${id}`, { token: alice.accessToken })).status).toBe(404);
    expect(
      (
        await t.api('PATCH', `/api/memories/${id}`, {
          token: alice.accessToken,
          body: { content: 'hijacked' },
        })
      ).status,
    ).toBe(404);
    expect((await t.api('DELETE', `/api/memories/${id}`, { token: alice.accessToken })).status).toBe(404);
    expect((await t.api('GET', `/api/memories/${id}`, { token: admin.accessToken })).status).toBe(404);
    for (const path of [`/api/memories/${id}`, '/api/memories', '/api/memories/export'])
      expect((await t.api('GET', path)).status).toBe(401);

    for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999'])
      expect((await t.api('GET', `/api/memories/${bad}`, { token: bob.accessToken })).status).toBe(400);
    expect((await t.api('GET', '/api/memories/123456789', { token: bob.accessToken })).status).toBe(404);
    expect((await t.api('PATCH', `/api/memories/${id}`, { token: bob.accessToken, body: {} })).status).toBe(
      400,
    );
    expect(
      (await t.api('PATCH', `/api/memories/${id}`, { token: bob.accessToken, body: { content: '' } })).status,
    ).toBe(400);
    expect(
      (
        await t.api('PATCH', `/api/memories/${id}`, {
          token: bob.accessToken,
          body: { content: 'x'.repeat(MAX + 1) },
        })
      ).status,
    ).toBe(400);

    const edited = await t.api('PATCH', `/api/memories/${id}`, {
      token: bob.accessToken,
      body: { content: 'Bob parks his tandem by the windmill.', metadata: { npcName: 'Mira' } },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      content: 'Bob parks his tandem by the windmill.',
      metadata: { npcName: 'Mira' },
    });
    const pending = await t.deps.db
      .selectFrom('memory_chunks')
      .select(['content'])
      .where('memory_id', '=', id)
      .execute();
    expect(pending.map((c) => c.content)).toEqual(['Bob parks his tandem by the windmill.']);
    await t.deps.jobs.drain(20_000);
    const embedded = await t.deps.db
      .selectFrom('memory_chunks as c')
      .leftJoin('memory_embeddings as e', 'e.chunk_id', 'c.id')
      .select(['e.model as embedding_model'])
      .where('c.memory_id', '=', id)
      .execute();
    expect(embedded[0]!.embedding_model).toBe(SEMANTIC_EMBEDDING_MODEL);
    const found = await t.api('GET', '/api/assistant/memory?query=tandem%20windmill', {
      token: bob.accessToken,
    });
    expect(found.body.memories[0].id).toBe(id);

    const exp = await t.api('GET', '/api/memories/export', { token: bob.accessToken });
    expect(exp.status).toBe(200);
    expect(exp.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = exp.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { userId: number; id: number });
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.every((l) => l.userId === bob.id)).toBe(true);
    expect(lines.map((l) => l.id)).toEqual([...lines.map((l) => l.id)].sort((a, b) => a - b));
    const aliceExport = await t.api('GET', '/api/memories/export', { token: alice.accessToken });
    expect(aliceExport.text).not.toContain('windmill');

    expect((await t.api('DELETE', `/api/memories/${id}`, { token: bob.accessToken })).status).toBe(204);
    expect((await t.api('GET', `/api/memories/${id}`, { token: bob.accessToken })).status).toBe(404);
    const chunks = await t.deps.db
      .selectFrom('memory_chunks')
      .select('id')
      .where('memory_id', '=', id)
      .execute();
    expect(chunks).toHaveLength(0);
  });
});

describe('gatherContext', () => {
  it('returns the spec’s ConversationContext with the three tiers and pluggable slots', async () => {
    const m = t.deps.services.memory;
    const conv = 4242;
    await m.addMemory({
      userId: alice.id,
      source: 'shared',
      content: 'Alice asked Mira about the harbour lights.',
      conversationId: conv,
    });
    await m.addMemory({
      userId: alice.id,
      source: 'shared',
      content: 'Alice asked about harbour fees once.',
    });
    const ctx = await m.gatherContext(
      alice.id,
      npc.id,
      'Tell me about the harbour and the realm capital',
      conv,
    );
    expect(ctx.memoryContext.worldContext).toContain('Lumen');
    expect(ctx.memoryContext.assistantContext).toContain('harbour guild');
    expect(ctx.memoryContext.personalContext.split('\n')[0]).toContain('harbour lights');
    expect(ctx.memoryContext.personalContext).not.toContain('Bob');
    expect(ctx.npcInfo).toEqual({ name: 'Mira', description: '', assistant_user_id: npc.id });
    expect(ctx.playerInventory).toEqual({});

    const embedding = await m.embedQuery('harbour');
    const ctx2 = await m.gatherContext(alice.id, npc.id, 'harbour', undefined, { queryEmbedding: embedding });
    expect(ctx2.playerQuests).toEqual({});
    expect(ctx2.memories.length).toBeGreaterThan(0);
  });
});
