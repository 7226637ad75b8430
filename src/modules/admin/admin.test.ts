// Operator endpoints: health with the embedded/Postgres details, and system statistics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/admin/stats', () => {
  it('counts accounts, memories, chat and model calls for admins', async () => {
    const admin = await createUser(t, 'cso');
    const player = await createUser(t);
    await t.deps.services.memory.addMemory({
      userId: player.id,
      content: 'The player likes ravens.',
      source: 'shared',
    });
    await t.deps.models.embed(['one text'], 'test.stats');
    const res = await t.api('GET', '/api/admin/stats?hours=1', { token: admin.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.windowHours).toBe(1);
    expect(res.body.users).toEqual(
      expect.arrayContaining([{ role: 'cso', accountType: 'public', count: 1 }]),
    );
    expect(
      res.body.memories.find((m: { tier: string }) => m.tier === 'shared')?.count,
    ).toBeGreaterThanOrEqual(1);
    expect(
      res.body.modelCalls.find(
        (m: { kind: string; outcome: string }) => m.kind === 'embed' && m.outcome === 'ok',
      )?.calls,
    ).toBeGreaterThanOrEqual(1);
  });

  it('validates the window and refuses non-admins', async () => {
    const admin = await createUser(t, 'developer');
    expect((await t.api('GET', '/api/admin/stats?hours=0', { token: admin.accessToken })).status).toBe(400);
    const user = await createUser(t);
    expect((await t.api('GET', '/api/admin/stats', { token: user.accessToken })).status).toBe(403);
    expect((await t.api('GET', '/api/admin/stats')).status).toBe(401);
  });
});

describe('GET /api/admin/health', () => {
  it('reports the database, vector support, job queues and the model provider', async () => {
    const admin = await createUser(t, 'cso');
    const res = await t.api('GET', '/api/admin/health', { token: admin.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      database: { ok: true, migrations: { pending: 0 } },
      jobs: { running: true },
    });
    expect(res.body.vector.mode).toBe(t.deps.database.capabilities.vector ? 'pgvector' : 'sketch-index');
    // The sketch index exists only without pgvector.
    if (t.deps.database.capabilities.vector) expect(res.body.vector.sketchIndex).toBeUndefined();
    else expect(res.body.vector.sketchIndex).toEqual(t.deps.services.memory.sketches!.stats());
    expect(res.body.models.offline).toBe(true);
  });
});
