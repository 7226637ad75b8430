// Operator endpoints: health with the embedded/Postgres details, and system statistics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';
import { CLIENT_TYPES } from '../../platform/security/identity.rules.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/admin/stats', () => {
  it('counts accounts, memories, chat, timeline events and model calls for admins', async () => {
    // The file's first test: the database holds only what it makes.
    const admin = await createUser(t, 'cso');
    const player = await createUser(t);
    await t.deps.services.memory.addMemory({
      userId: player.id,
      content: 'The player likes ravens.',
      source: 'shared',
    });
    const conversation = await t.api('POST', '/api/conversations', {
      token: player.accessToken,
      body: { title: 'Ravens' },
    });
    expect(conversation.status).toBe(201);
    const event = await t.api('POST', '/api/sync/ingest-event', {
      token: admin.accessToken,
      body: { userId: player.id, eventType: 'note', eventText: 'A raven landed.' },
    });
    expect(event.status, event.text).toBeLessThan(300);
    await t.deps.models.embed(['one text'], 'test.stats');
    await t.deps.jobs.drain(20_000);
    await t.deps.models.flush();
    const res = await t.api('GET', '/api/admin/stats?hours=1', { token: admin.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.windowHours).toBe(1);
    expect(res.body.users).toEqual(
      expect.arrayContaining([
        { role: 'cso', accountType: 'public', count: 1 },
        { role: 'carbon', accountType: 'public', count: 1 },
      ]),
    );
    expect(res.body.users.reduce((n: number, u: { count: number }) => n + u.count, 0)).toBe(
      Number(
        (
          await t.deps.db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    );
    expect(res.body.memories).toEqual([{ tier: 'shared', count: 1 }]);
    expect(res.body.conversations).toBe(1);
    expect(res.body.messages).toEqual({ total: 0, recent: 0, failed: 0 });
    expect(res.body.timelineEvents).toEqual({ total: 1, recent: 1 });
    // Each kind and outcome as the calls recorded: counts, token sums and latencies.
    const calls = await t.deps.db
      .selectFrom('model_calls')
      .select(['kind', 'outcome', 'tokens_in', 'tokens_out', 'latency_ms'])
      .execute();
    const embeds = calls.filter((c) => c.kind === 'embed' && c.outcome === 'ok');
    expect(calls).toHaveLength(embeds.length);
    expect(embeds.length).toBe(2); // the memory's embedding job and this test's own call
    const latencies = embeds.map((c) => Number(c.latency_ms)).sort((a, b) => a - b);
    expect(res.body.modelCalls).toEqual([
      {
        kind: 'embed',
        outcome: 'ok',
        calls: 2,
        tokensIn: embeds.reduce((n, c) => n + Number(c.tokens_in ?? 0), 0),
        tokensOut: embeds.reduce((n, c) => n + Number(c.tokens_out ?? 0), 0),
        avgLatencyMs: Math.round((latencies[0]! + latencies[1]!) / 2),
        p95LatencyMs: latencies[1],
      },
    ]);
  });

  it('counts sign-in sessions per client type: in use and begun in the window', async () => {
    const admin = await createUser(t, 'cso');
    const player = await createUser(t, 'public', { password: 'the right password' });
    const stats = async () => {
      const r = await t.api('GET', '/api/admin/stats?hours=1', { token: admin.accessToken });
      expect(r.status).toBe(200);
      return r.body.clientTypes as { clientType: string; sessions: number; signIns: number }[];
    };
    const signIn = async (clientType: string) => {
      const r = await t.api('POST', '/api/auth/token', {
        body: { email: player.email, password: 'the right password', clientType },
      });
      expect(r.status).toBe(200);
      return r.body.refreshToken as string;
    };
    const refresh = async (refreshToken: string) =>
      expect((await t.api('POST', '/api/auth/refresh', { body: { refreshToken } })).status).toBe(200);
    const before = await stats();
    // Every client type, in the spec's order.
    expect(before.map((c) => c.clientType)).toEqual([...CLIENT_TYPES]);

    // Two game-client sessions, one refreshed (still one session); a VR session begun two hours
    // ago and refreshed now: in use in the last hour, not begun in it.
    await refresh(await signIn('game_client'));
    await signIn('game_client');
    const old = await signIn('vr');
    await sql`update refresh_tokens set created_at = now() - interval '2 hours'
              where user_id = ${player.id} and client_type = 'vr'`.execute(t.deps.db);
    await refresh(old);

    const after = await stats();
    const delta = after.map((c, i) => ({
      clientType: c.clientType,
      sessions: c.sessions - before[i]!.sessions,
      signIns: c.signIns - before[i]!.signIns,
    }));
    expect(delta.filter((d) => d.sessions !== 0 || d.signIns !== 0)).toEqual([
      { clientType: 'game_client', sessions: 2, signIns: 2 },
      { clientType: 'vr', sessions: 1, signIns: 0 },
    ]);
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
