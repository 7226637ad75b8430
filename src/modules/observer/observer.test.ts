// Instance registry, the root observer, and the `/observer` namespace: who may join, room
// isolation, and the events that reach a room (contract: "Real time").
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { activityUpdate, IDLE_AFTER_MS, observerOf } from '../timeline/timeline.rules.js';

let t: TestApp;
let cso: TestUser;
let owner: TestUser;
let stranger: TestUser;
const sockets: Socket[] = [];

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
  stranger = await createUser(t, 'public');
});
afterAll(async () => {
  for (const s of sockets) s.disconnect();
  await t.close();
});

/** Connects to /observer; resolves with the socket, or rejects with the connect_error data
 * (the problem object). */
async function watch(auth: Record<string, unknown>): Promise<Socket> {
  const socket = connect(`${t.url}/observer`, {
    auth,
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
  });
  sockets.push(socket);
  const outcome = await new Promise<{ ok: true } | { ok: false; problem: unknown }>((resolve) => {
    socket.once('connect', () => resolve({ ok: true }));
    socket.once('connect_error', (err: Error & { data?: unknown }) =>
      resolve({ ok: false, problem: err.data ?? err }),
    );
  });
  if (!outcome.ok) throw outcome.problem;
  return socket;
}

function collect(socket: Socket, event: string): unknown[] {
  const seen: unknown[] = [];
  socket.on(event, (p: unknown) => seen.push(p));
  return seen;
}

async function until(check: () => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function newObserver(ownerId: number | undefined, name = 'Obs') {
  const r = await t.api('POST', '/api/admin/instances', {
    token: cso.accessToken,
    body: { name, level: 8, source: 'portal', ...(ownerId ? { userId: ownerId } : {}) },
  });
  expect(r.status).toBe(201);
  return r.body as { id: number };
}

describe('timeline rules', () => {
  it.each([
    [null, 1, 1],
    [{ id: 7, level: 8 as const, parent_instance_id: null }, 1, 7],
    [{ id: 9, level: 5 as const, parent_instance_id: 7 }, 1, 7],
    [{ id: 9, level: 5 as const, parent_instance_id: null }, 1, 1],
  ])('observerOf(%j, root %s) = %s', (instance, root, expected) => {
    expect(observerOf(instance, root)).toBe(expected);
  });

  it('touches lastSeenAt at most once a second and announces activity after idleness', () => {
    const now = new Date('2026-01-01T00:10:00Z');
    expect(activityUpdate(null, now)).toEqual({ touch: true, announce: true });
    expect(activityUpdate(new Date(now.getTime() - 10), now)).toEqual({ touch: false, announce: false });
    expect(activityUpdate(new Date(now.getTime() - 2000), now)).toEqual({ touch: true, announce: false });
    expect(activityUpdate(new Date(now.getTime() - IDLE_AFTER_MS), now)).toEqual({
      touch: true,
      announce: true,
    });
  });
});

describe('instance registry', () => {
  it('has a root observer from first start, owned by the first CSO once one exists', async () => {
    const rootId = await t.deps.services.timeline.ensureRootObserver();
    const root = await t.api('GET', `/api/admin/instances/${rootId}`, { token: cso.accessToken });
    expect(root.body).toMatchObject({ name: 'Observer', level: 8, isRoot: true, userId: cso.id });
    // Starting again (another node) creates no second root.
    await Promise.all([
      t.deps.services.timeline.ensureRootObserver(),
      t.deps.services.timeline.ensureRootObserver(),
    ]);
    const roots = await t.deps.db.selectFrom('instances').select('id').where('is_root', '=', true).execute();
    expect(roots).toEqual([{ id: rootId }]);
  });

  it('creates, lists, shows and patches instances; creation is a timeline event', async () => {
    const obs = await newObserver(owner.id, 'Country');
    const l5 = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: {
        name: 'Portal fragment',
        level: 5,
        source: 'chat_platform',
        personaId: 3,
        parentInstanceId: obs.id,
        channelId: 'c-1',
        metadata: { a: 1 },
      },
    });
    expect(l5.status).toBe(201);
    expect(l5.body).toMatchObject({
      level: 5,
      source: 'chat_platform',
      personaId: 3,
      parentInstanceId: obs.id,
      channelId: 'c-1',
      isActive: true,
      metadata: { a: 1 },
      isRoot: false,
    });
    expect(l5.body.lastSeenAt).not.toBeNull();
    const events = await t.deps.services.timeline.list({ observerId: obs.id, limit: 10 });
    expect(events.find((e) => e.instanceId === l5.body.id)).toMatchObject({
      eventType: 'instance_created',
      source: 'chat_platform',
      personaId: 3,
      metadata: { instance: { level: 5, name: 'Portal fragment' } },
    });

    const list = await t.api(
      'GET',
      `/api/admin/instances?level=5&source=chat_platform&active=true&parentInstanceId=${obs.id}`,
      { token: cso.accessToken },
    );
    expect(list.body).toMatchObject({ total: 1, instances: [{ id: l5.body.id }] });
    const patched = await t.api('PATCH', `/api/admin/instances/${l5.body.id}`, {
      token: cso.accessToken,
      body: { isActive: false, metadata: { b: 2 } },
    });
    expect(patched.body).toMatchObject({ isActive: false, metadata: { b: 2 } });
    expect(
      (await t.api('GET', `/api/admin/instances/${l5.body.id}`, { token: cso.accessToken })).body.isActive,
    ).toBe(false);
  });

  it('rejects bad input, unknown references, non-admins and the unauthenticated', async () => {
    const bad = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'x', level: 6, source: 'portal' },
    });
    expect(bad.status).toBe(400);
    const parent = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'x', level: 5, source: 'portal', parentInstanceId: 999999 },
    });
    expect(parent.body).toMatchObject({ status: 400, errors: [{ path: 'parentInstanceId' }] });
    const l5 = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'leaf', level: 5, source: 'portal' },
    });
    const underLeaf = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'x', level: 5, source: 'portal', parentInstanceId: l5.body.id },
    });
    expect(underLeaf.status).toBe(400);
    const noUser = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'x', level: 8, source: 'portal', userId: 999999 },
    });
    expect(noUser.body).toMatchObject({ status: 400, errors: [{ path: 'userId' }] });
    expect(
      (await t.api('PATCH', `/api/admin/instances/${l5.body.id}`, { token: cso.accessToken, body: {} }))
        .status,
    ).toBe(400);
    expect((await t.api('GET', '/api/admin/instances/999999', { token: cso.accessToken })).status).toBe(404);
    expect(
      (
        await t.api('PATCH', '/api/admin/instances/999999', {
          token: cso.accessToken,
          body: { isActive: true },
        })
      ).status,
    ).toBe(404);
    expect((await t.api('GET', '/api/admin/instances', { token: owner.accessToken })).status).toBe(403);
    expect(
      (
        await t.api('POST', '/api/admin/instances', {
          token: owner.accessToken,
          body: { name: 'x', level: 8, source: 'portal' },
        })
      ).status,
    ).toBe(403);
    expect((await t.api('GET', '/api/admin/instances')).status).toBe(401);
  });
});

describe('/observer namespace', () => {
  it('admits a CSO, an admin and the owner; refuses others with a problem object', async () => {
    const obs = await newObserver(owner.id);
    const dev = await createUser(t, 'developer');
    await expect(watch({ token: cso.accessToken, observerId: obs.id })).resolves.toBeDefined();
    await expect(watch({ token: dev.accessToken, observerId: obs.id })).resolves.toBeDefined();
    await expect(watch({ token: owner.accessToken, observerId: obs.id })).resolves.toBeDefined();
    await expect(watch({ token: stranger.accessToken, observerId: obs.id })).rejects.toMatchObject({
      code: 'forbidden',
      status: 403,
    });
    // An observer that does not exist looks the same as one the caller may not watch.
    await expect(watch({ token: stranger.accessToken, observerId: 999999 })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(watch({ token: cso.accessToken, observerId: 999999 })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(watch({ observerId: obs.id })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(watch({ token: 'not-a-jwt', observerId: obs.id })).rejects.toMatchObject({ status: 401 });
    await expect(watch({ token: cso.accessToken })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(watch({ token: cso.accessToken, observerId: 'abc' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });

  it("never delivers observer B's events to a subscriber of observer A", async () => {
    const a = await newObserver(owner.id, 'A');
    const b = await newObserver(stranger.id, 'B');
    const child = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'B child', level: 5, source: 'game_client', parentInstanceId: b.id },
    });
    const sa = await watch({ token: owner.accessToken, observerId: a.id });
    const sb = await watch({ token: stranger.accessToken, observerId: b.id });
    const seenA = collect(sa, 'timeline_update');
    const seenB = collect(sb, 'timeline_update');
    const key = await t.deps.services.auth.createApiKey('isolation', ['sync:write'], null);
    for (const instanceId of [b.id, child.body.id, a.id]) {
      const r = await t.api('POST', '/api/sync/ingest-event', {
        apiKey: key.key,
        body: { userId: owner.id, eventType: 'ping', metadata: { instanceId } },
      });
      expect(r.status).toBe(201);
    }
    await until(() => seenA.length >= 1 && seenB.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(seenA).toHaveLength(1);
    expect(seenA[0]).toMatchObject({ observerId: a.id, instanceId: a.id });
    expect(seenB.map((e) => (e as { observerId: number }).observerId)).toEqual([b.id, b.id]);
  });

  it('broadcasts a director currency change to the root observer, and activity changes', async () => {
    const rootId = await t.deps.services.timeline.rootObserverId();
    const s = await watch({ token: cso.accessToken, observerId: rootId });
    const updates = collect(s, 'timeline_update');
    const player = await createUser(t, 'public');
    const assistant = await t.deps.services.characters.assistantUserId();
    const { event } = await t.deps.services.inventory.directorModifyCurrency({
      userId: player.id,
      amount: 5,
      actorUserId: assistant,
    });
    await until(() => updates.some((u) => (u as { id: number }).id === event.id));
    expect(updates.find((u) => (u as { id: number }).id === event.id)).toMatchObject({
      eventType: 'currency_changed',
      observerId: rootId,
      userId: player.id,
    });

    const activity = collect(s, 'instance_activity') as {
      instanceId: number;
      isActive: boolean;
      lastSeenAt: string | null;
    }[];
    const leaf = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'leaf', level: 5, source: 'portal' },
    });
    // First activity (its creation event) is announced, then the switch-off.
    await until(() => activity.some((a) => a.instanceId === leaf.body.id && a.isActive));
    await t.api('PATCH', `/api/admin/instances/${leaf.body.id}`, {
      token: cso.accessToken,
      body: { isActive: false },
    });
    await until(() => activity.some((a) => a.instanceId === leaf.body.id && !a.isActive));
    expect(activity.filter((a) => a.instanceId === leaf.body.id).map((a) => a.isActive)).toEqual([
      true,
      false,
    ]);
  });
});
