// Sync endpoints (contract: "Instances, timeline and sync"): hybrid authentication and
// scopes, ingest validation, the broadcast of an ingested event, idempotent replays, and the
// universal state.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { toProblem, type AppError } from '../../platform/http/problem.js';

let t: TestApp;
let cso: TestUser;
let player: TestUser;
let readKey: string;
let writeKey: string;
let bothKey: string;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  player = await createUser(t, 'public');
  readKey = (await t.deps.services.auth.createApiKey('reader', ['sync:read'], null)).key;
  writeKey = (await t.deps.services.auth.createApiKey('writer', ['sync:write'], null)).key;
  bothKey = (await t.deps.services.auth.createApiKey('both', ['sync:read', 'sync:write'], null)).key;
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

const ingest = (opts: { apiKey?: string; token?: string; headers?: Record<string, string> }, body: unknown) =>
  t.api('POST', '/api/sync/ingest-event', { ...opts, body });

describe('API key scopes and hybrid authentication', () => {
  it('universal-state needs sync:read (or an admin token)', async () => {
    expect((await t.api('GET', '/api/sync/universal-state', { apiKey: readKey })).status).toBe(200);
    expect((await t.api('GET', '/api/sync/universal-state', { apiKey: bothKey })).status).toBe(200);
    const wrong = await t.api('GET', '/api/sync/universal-state', { apiKey: writeKey });
    expect(wrong.body).toMatchObject({ status: 403, code: 'forbidden', requiredScope: 'sync:read' });
    expect((await t.api('GET', '/api/sync/universal-state', { apiKey: 'apk_nope' })).body.code).toBe(
      'unauthenticated',
    );
    expect((await t.api('GET', '/api/sync/universal-state')).status).toBe(401);
    expect((await t.api('GET', '/api/sync/universal-state', { token: cso.accessToken })).status).toBe(200);
    expect((await t.api('GET', '/api/sync/universal-state', { token: player.accessToken })).status).toBe(403);
    // A present but bad token is never rescued by a good key.
    expect((await t.api('GET', '/api/sync/universal-state', { token: 'bad', apiKey: readKey })).status).toBe(
      401,
    );
  });

  it('ingest-event needs sync:write (or an admin token)', async () => {
    const body = { userId: player.id, eventType: 'scope_check' };
    expect((await ingest({ apiKey: writeKey }, body)).status).toBe(201);
    expect((await ingest({ apiKey: bothKey }, body)).status).toBe(201);
    expect((await ingest({ apiKey: readKey }, body)).body).toMatchObject({
      status: 403,
      requiredScope: 'sync:write',
    });
    expect((await ingest({}, body)).status).toBe(401);
    expect((await ingest({ token: cso.accessToken }, body)).status).toBe(201);
    expect((await ingest({ token: player.accessToken }, body)).status).toBe(403);
    const revoked = await t.deps.services.auth.createApiKey('gone', ['sync:write'], null);
    await t.deps.services.auth.revokeApiKey(revoked.id);
    expect((await ingest({ apiKey: revoked.key }, body)).status).toBe(401);
  });
});

describe('POST /api/sync/ingest-event', () => {
  // The suggestions' pass follows workflow writes, not events that look like theirs (its job would
  // refuse this id, and the ingest with it).
  it('takes an event that looks like a workflow’s for what it is: the world’s, no workflow write', async () => {
    const r = await ingest(
      { apiKey: writeKey },
      {
        userId: player.id,
        eventType: 'workflow_transition',
        metadata: { source: 'state_machine', stateMachineInstanceId: 'not-an-instance' },
      },
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ source: 'state_machine', eventType: 'workflow_transition' });
  });

  it('writes an enriched event linked to its observer', async () => {
    const obs = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'World', level: 8, source: 'game_client', personaId: 4 },
    });
    const r = await ingest(
      { apiKey: writeKey },
      {
        userId: player.id,
        eventType: 'quest_started',
        eventText: 'The hunt begins',
        metadata: { instanceId: obs.body.id, zone: 'north' },
      },
    );
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      userId: player.id,
      eventType: 'quest_started',
      eventText: 'The hunt begins',
      source: 'game_client',
      instanceId: obs.body.id,
      observerId: obs.body.id,
      personaId: 4,
      metadata: {
        instanceId: obs.body.id,
        zone: 'north',
        instance: { id: obs.body.id, level: 8, source: 'game_client' },
      },
    });
    expect(Date.parse(r.body.timelineAt)).not.toBeNaN();
    // Without an instance: the root observer, and eventText defaults to "".
    const plain = await ingest({ apiKey: writeKey }, { userId: player.id, eventType: 'login' });
    expect(plain.body).toMatchObject({
      eventText: '',
      instanceId: null,
      observerId: await t.deps.services.timeline.rootObserverId(),
      source: 'system',
    });
  });

  it('rejects bad bodies, unknown users and unknown instances with validation_failed', async () => {
    for (const body of [
      {},
      { userId: player.id },
      { userId: 'x', eventType: 'a' },
      { userId: player.id, eventType: '' },
      { userId: player.id, eventType: 'a', metadata: { instanceId: 'x' } },
      // Only the service writes these: 5D rebuilds activity from them, reflections are its own.
      { userId: player.id, eventType: 'instance_activity_changed', metadata: { isActive: false } },
      { userId: player.id, eventType: 'reflection_generated' },
    ]) {
      const r = await ingest({ apiKey: writeKey }, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const noInstance = await ingest(
      { apiKey: writeKey },
      { userId: player.id, eventType: 'a', metadata: { instanceId: 999999 } },
    );
    expect(noInstance.body).toMatchObject({ status: 400, errors: [{ path: 'metadata.instanceId' }] });
    const noUser = await ingest({ apiKey: writeKey }, { userId: 999999, eventType: 'a' });
    expect(noUser.body).toMatchObject({ status: 400, errors: [{ path: 'userId' }] });
  });

  it('replays the first answer for a repeated Idempotency-Key, per caller', async () => {
    const headers = { 'idempotency-key': 'evt-42' };
    const body = { userId: player.id, eventType: 'idem', eventText: 'once' };
    const first = await ingest({ apiKey: writeKey, headers }, body);
    const [a, b] = await Promise.all([
      ingest({ apiKey: writeKey, headers }, body),
      ingest({ apiKey: writeKey, headers }, body),
    ]);
    for (const r of [a, b]) {
      expect(r.status).toBe(201);
      expect(r.body).toEqual(first.body);
      expect(r.headers.get('idempotent-replayed')).toBe('true');
    }
    const events = await t.deps.services.timeline.list({ userId: player.id, eventType: 'idem', limit: 10 });
    expect(events).toHaveLength(1);
    expect((await ingest({ apiKey: writeKey, headers }, { ...body, eventText: 'twice' })).status).toBe(409);
    // Another caller's key space is separate.
    const other = await ingest({ apiKey: bothKey, headers }, body);
    expect(other.body.id).not.toBe(first.body.id);
  });

  it('delivers timeline_update to the observer room after the ingest commits', async () => {
    const owner = await createUser(t, 'public');
    const obs = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'Mine', level: 8, source: 'portal', userId: owner.id },
    });
    const s = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId: obs.body.id },
    });
    const r = await ingest(
      { apiKey: writeKey },
      { userId: owner.id, eventType: 'arrived', metadata: { instanceId: obs.body.id } },
    );
    // The room's one update is the event as the ingest answered it.
    const event = await s.next('timeline_update');
    expect(event.payload).toEqual(r.body);
    s.close();
  });
});

describe('ingests written together', () => {
  it('writes the ingests queued behind one in one transaction, each answered with its own event, broadcast in order', async () => {
    const owner = await createUser(t, 'public');
    const obs = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'Batched', level: 8, source: 'portal', userId: owner.id },
    });
    const other = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'Batched 2', level: 8, source: 'portal', userId: owner.id },
    });
    const s = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId: obs.body.id },
    });
    // Each flush of the timeline's events: one per unit of work.
    const flushes = vi.spyOn(t.deps.services.timeline, 'flush');
    try {
      // Called in one turn: the first is written at once, the other 29 wait for it, then go together.
      const inputs = Array.from({ length: 30 }, (_, i) => ({
        userId: owner.id,
        eventType: `batched-${i}`,
        eventText: `event ${i}`,
        metadata: { instanceId: i % 3 === 0 ? other.body.id : obs.body.id, i },
      }));
      const answers = await Promise.all(inputs.map((input) => t.deps.services.sync.ingest(input, undefined)));
      expect(flushes.mock.calls.map((c) => c[1].length)).toEqual([1, 29]);
      answers.forEach(({ value, replayed }, i) => {
        expect(replayed).toBe(false);
        expect(value).toMatchObject({
          eventType: `batched-${i}`,
          eventText: `event ${i}`,
          instanceId: inputs[i]!.metadata.instanceId,
          observerId: inputs[i]!.metadata.instanceId,
          metadata: { i, instance: { id: inputs[i]!.metadata.instanceId } },
        });
      });
      // Ids ascend in the order the ingests were called, and each is stored as answered.
      const ids = answers.map((a) => a.value.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const stored = await t.deps.services.timeline.list({ observerId: obs.body.id, limit: 100 });
      const mine = answers.filter((a) => a.value.observerId === obs.body.id).map((a) => a.value);
      expect(stored.filter((e) => e.eventType.startsWith('batched-')).reverse()).toEqual(mine);
      // The room hears its own events, once each, in that order.
      await s.next('timeline_update', { match: (e: { eventType: string }) => e.eventType === 'batched-29' });
      expect(s.events.filter((e) => e.name === 'timeline_update').map((e) => e.payload)).toEqual(mine);
    } finally {
      flushes.mockRestore();
      s.close();
    }
  });

  it('answers each ingest of a refused batch on its own: the refused with their 400, the others with their event', async () => {
    const p = await createUser(t, 'public');
    const inputs = Array.from({ length: 20 }, (_, i) =>
      i === 7
        ? { userId: 999999, eventType: 'refused-user', eventText: '', metadata: {} }
        : i === 12
          ? { userId: p.id, eventType: 'refused-instance', eventText: '', metadata: { instanceId: 999999 } }
          : { userId: p.id, eventType: `mixed-${i}`, eventText: '', metadata: {} },
    );
    // Each flush of the timeline's events: one per unit of work.
    const flushes = vi.spyOn(t.deps.services.timeline, 'flush');
    try {
      const answers = await Promise.allSettled(
        inputs.map((input) => t.deps.services.sync.ingest(input, undefined)),
      );
      // The first alone, the 19 behind it together (refused), then each of those on its own.
      expect(flushes.mock.calls.map((c) => c[1].length)).toEqual([1, 19, ...Array<number>(19).fill(1)]);
      answers.forEach((r, i) => {
        if (i === 7 || i === 12) {
          expect(r.status).toBe('rejected');
          const problem = ((r as PromiseRejectedResult).reason as AppError).toProblem();
          expect(problem).toMatchObject({
            status: 400,
            errors: [{ path: i === 7 ? 'userId' : 'metadata.instanceId' }],
          });
        } else {
          expect(r.status).toBe('fulfilled');
          expect((r as PromiseFulfilledResult<{ value: unknown }>).value.value).toMatchObject({
            userId: p.id,
            eventType: `mixed-${i}`,
          });
        }
      });
    } finally {
      flushes.mockRestore();
    }
    const stored = await t.deps.services.timeline.list({ userId: p.id, limit: 100 });
    expect(stored.map((e) => e.eventType).sort()).toEqual(
      inputs
        .filter((_, i) => i !== 7 && i !== 12)
        .map((b) => b.eventType)
        .sort(),
    );
  });

  it('refuses with 503 an ingest that waited for its turn longer than the pool timeout', async () => {
    const p = await createUser(t, 'public');
    const sync = t.deps.services.sync;
    const input = (eventType: string) => ({ userId: p.id, eventType, eventText: '', metadata: {} });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // The first is written at once; the clock passes the timeout while the others wait.
      const first = sync.ingest(input('first'), undefined);
      const late = [sync.ingest(input('late-1'), undefined), sync.ingest(input('late-2'), undefined)];
      vi.setSystemTime(Date.now() + t.deps.config.database.poolTimeoutMs + 1);
      expect((await first).value).toMatchObject({ eventType: 'first' });
      for (const answer of await Promise.allSettled(late)) {
        expect(answer.status).toBe('rejected');
        expect(toProblem((answer as PromiseRejectedResult).reason)).toMatchObject({
          status: 503,
          code: 'service_unavailable',
        });
      }
    } finally {
      vi.useRealTimers();
    }
    const stored = await t.deps.services.timeline.list({ userId: p.id, limit: 10 });
    expect(stored.map((e) => e.eventType)).toEqual(['first']);
  });
});

describe('OpenAPI', () => {
  it('documents both sync endpoints with bearer or API key security and the Idempotency-Key header', async () => {
    const doc = await t.api('GET', '/api/openapi.json');
    const ingestDoc = doc.body.paths['/api/sync/ingest-event'].post;
    expect(ingestDoc.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(ingestDoc.parameters.map((p: { name: string }) => p.name)).toContain('idempotency-key');
    expect(Object.keys(ingestDoc.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '409']),
    );
    expect(doc.body.paths['/api/sync/universal-state'].get.security).toEqual([
      { bearer: [] },
      { apiKey: [] },
    ]);
    expect(
      doc.body.paths['/api/inventory/modify'].post.parameters.map((p: { name: string }) => p.name),
    ).toContain('idempotency-key');
  });
});

describe('GET /api/sync/universal-state', () => {
  it('answers the assistant part without a player, and every part with one', async () => {
    const assistantId = await t.deps.services.characters.assistantUserId();
    await t.api('PUT', `/api/admin/data/npcs/${assistantId}/state`, {
      token: cso.accessToken,
      body: { emotions: { joy: 0.8 }, config: { tone: 'warm' } },
    });
    const bare = await t.api('GET', '/api/sync/universal-state', { apiKey: readKey });
    expect(bare.body).toEqual({
      assistantState: {
        persona: { name: 'Assistant', description: '', personaType: 'assistant' },
        emotions: { joy: 0.8 },
        config: { tone: 'warm' },
      },
      emotions: { joy: 0.8 },
      memories: [],
      timeline: [],
      inventory: { items: [], energy_coins: 0 },
      quests: [],
      relationships: [],
    });

    const p = await createUser(t, 'public');
    const { inventory, characters } = t.deps.services;
    const item = await inventory.createItem({ name: 'Lamp', description: '', type: 'tool' });
    await inventory.modifyInventory(p.id, item.id, 2);
    await inventory.modifyCurrency(p.id, 9);
    const quest = await characters.createQuest({ title: 'Find the lamp', description: '' });
    await characters.setPlayerQuest(quest.id, p.id, { progress: 0.5 });
    await characters.putRelationship({
      userId: p.id,
      npcUserId: assistantId,
      flags: { met: true },
      affinity: 0.25,
    });
    for (let i = 0; i < 3; i++) await ingest({ apiKey: writeKey }, { userId: p.id, eventType: `e${i}` });
    for (const content of ['first memory', 'second memory', 'third memory'])
      await t.api('POST', '/api/assistant/memory', {
        token: p.accessToken,
        body: { content, source: 'shared' },
      });

    const full = await t.api('GET', `/api/sync/universal-state?userId=${p.id}&limit=2`, { apiKey: readKey });
    expect(full.status).toBe(200);
    expect(full.body.timeline.map((e: { eventType: string }) => e.eventType)).toEqual(['e2', 'e1']);
    expect(full.body.inventory).toMatchObject({
      energy_coins: 9,
      items: [{ item_id: item.id, name: 'Lamp', quantity: 2 }],
    });
    expect(full.body.quests).toMatchObject([
      { questId: quest.id, title: 'Find the lamp', status: 'active', progress: 0.5 },
    ]);
    expect(full.body.relationships).toMatchObject([
      { npcUserId: assistantId, npcName: 'Assistant', flags: { met: true }, affinity: 0.25 },
    ]);
    expect(full.body.memories).toHaveLength(2);
    expect(full.body.memories.map((m: { content: string }) => m.content)).toEqual([
      'third memory',
      'second memory',
    ]);
    expect(full.body.memories[0]).toMatchObject({ userId: p.id, source: 'shared' });
  });

  it('validates the query and answers 404 for an unknown player', async () => {
    expect((await t.api('GET', '/api/sync/universal-state?limit=201', { apiKey: readKey })).status).toBe(400);
    expect((await t.api('GET', '/api/sync/universal-state?userId=abc', { apiKey: readKey })).status).toBe(
      400,
    );
    expect((await t.api('GET', '/api/sync/universal-state?userId=999999', { apiKey: readKey })).status).toBe(
      404,
    );
  });
});
