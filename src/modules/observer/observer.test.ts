// The `/observer` namespace: who may join, room isolation, and the events that reach a room
// (contract: "Real time"). The instance registry and the timeline are timeline.test.ts's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  eventually,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';

let t: TestApp;
let cso: TestUser;
let owner: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
  stranger = await createUser(t, 'public');
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

/** Connects to /observer; rejects with the connect_error's problem object. */
const watch = (auth: Record<string, unknown>) => connectSocket(t.url, { namespace: '/observer', auth });

async function newInstance(body: Record<string, unknown>): Promise<{ id: number }> {
  const r = await t.api('POST', '/api/admin/instances', { token: cso.accessToken, body });
  expect(r.status).toBe(201);
  return r.body as { id: number };
}

const newObserver = (userId: number, name = 'Obs') =>
  newInstance({ name, level: 8, source: 'portal', userId });

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
    // A Level-5 instance is no observer.
    const leaf = await newInstance({ name: 'leaf', level: 5, source: 'portal', parentInstanceId: obs.id });
    await expect(watch({ token: cso.accessToken, observerId: leaf.id })).rejects.toMatchObject({
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
    const child = await newInstance({
      name: 'B child',
      level: 5,
      source: 'game_client',
      parentInstanceId: b.id,
    });
    const sa = await watch({ token: owner.accessToken, observerId: a.id });
    const sb = await watch({ token: stranger.accessToken, observerId: b.id });
    const key = await t.deps.services.auth.createApiKey('isolation', ['sync:write'], null);
    // B's two events commit (and are broadcast) before A's one.
    for (const instanceId of [b.id, child.id, a.id]) {
      const r = await t.api('POST', '/api/sync/ingest-event', {
        apiKey: key.key,
        body: { userId: owner.id, eventType: 'ping', metadata: { instanceId } },
      });
      expect(r.status).toBe(201);
    }
    // A's event arriving is the signal: anything of B's sent to A's room would have come before
    // it, on the same connection.
    await sa.next('timeline_update', { match: (e) => e.instanceId === a.id });
    const seenA = sa.events.filter((e) => e.name === 'timeline_update').map((e) => e.payload);
    expect(seenA).toHaveLength(1);
    expect(seenA[0]).toMatchObject({ observerId: a.id, instanceId: a.id });
    await sb.next('timeline_update', { match: (e) => e.instanceId === child.id });
    const seenB = sb.events.filter((e) => e.name === 'timeline_update').map((e) => e.payload);
    expect(seenB.map((e) => [e.observerId, e.instanceId])).toEqual([
      [b.id, b.id],
      [b.id, child.id],
    ]);
  });

  it('broadcasts a director currency change to the root observer, and activity changes', async () => {
    const rootId = await t.deps.services.timeline.rootObserverId();
    const s = await watch({ token: cso.accessToken, observerId: rootId });
    const player = await createUser(t, 'public');
    const assistant = await t.deps.services.characters.assistantUserId();
    const { event } = await t.deps.services.inventory.directorModifyCurrency({
      userId: player.id,
      amount: 5,
      actorUserId: assistant,
    });
    const update = await s.next('timeline_update', { match: (u) => u.id === event.id });
    expect(update.payload).toMatchObject({
      eventType: 'currency_changed',
      observerId: rootId,
      userId: player.id,
    });

    // A Level-5 instance without a parent reports to the root: its first activity (the creation
    // event) is announced, then the switch-off.
    const leaf = await newInstance({ name: 'leaf', level: 5, source: 'portal' });
    const ofLeaf = (a: { instanceId: number }) => a.instanceId === leaf.id;
    await s.next('instance_activity', { match: (a) => ofLeaf(a) && a.isActive });
    await t.api('PATCH', `/api/admin/instances/${leaf.id}`, {
      token: cso.accessToken,
      body: { isActive: false },
    });
    await s.next('instance_activity', { match: (a) => ofLeaf(a) && !a.isActive });
    const activity = s.events.filter((e) => e.name === 'instance_activity' && ofLeaf(e.payload));
    expect(activity.map((e) => e.payload.isActive)).toEqual([true, false]);
  });
});

describe('GET /api/observer/observers', () => {
  it('lists every observer for a CSO or an admin, only their own for an owner, none for others', async () => {
    const mine = [await newObserver(owner.id, 'Mine 1'), await newObserver(owner.id, 'Mine 2')];
    const theirs = await newObserver(stranger.id, 'Theirs');
    // A Level-5 instance the owner owns is no observer.
    await newInstance({
      name: 'leaf',
      level: 5,
      source: 'portal',
      parentInstanceId: mine[0]!.id,
      userId: owner.id,
    });
    const list = (token?: string) => t.api('GET', '/api/observer/observers', token ? { token } : {});
    const ids = (r: { body: any }) => (r.body.observers as { id: number }[]).map((o) => o.id);

    // Every Level-8 instance, by id, for a CSO and for an admin (a developer account).
    const all = await t.deps.services.instances.list({ level: 8, limit: 1000, offset: 0 });
    const allIds = all.instances.map((i) => i.id).sort((a, b) => a - b);
    expect(allIds).toEqual(expect.arrayContaining([...mine.map((o) => o.id), theirs.id]));
    const dev = await createUser(t, 'developer');
    for (const who of [cso, dev]) {
      const r = await list(who.accessToken);
      expect(r.status).toBe(200);
      expect(ids(r)).toEqual(allIds);
      expect(r.body.observers.every((o: { level: number }) => o.level === 8)).toBe(true);
    }

    // The owner: their observers only (created in this test or the ones before), in id order.
    const r = await list(owner.accessToken);
    expect(r.status).toBe(200);
    expect(r.body.observers.length).toBeGreaterThanOrEqual(2);
    expect(r.body.observers.every((o: { userId: number }) => o.userId === owner.id)).toBe(true);
    expect(ids(r)).toEqual([...ids(r)].sort((a, b) => a - b));
    expect(ids(r)).toEqual(expect.arrayContaining(mine.map((o) => o.id)));
    expect(ids(r)).not.toContain(theirs.id);
    expect(r.body.observers.find((o: { id: number }) => o.id === mine[0]!.id)).toMatchObject({
      name: 'Mine 1',
      level: 8,
      userId: owner.id,
      isRoot: false,
    });

    // Someone who owns no observer: an empty list, not a refusal.
    const nobody = await createUser(t, 'public');
    const none = await list(nobody.accessToken);
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ observers: [] });

    // No token.
    const anon = await list();
    expect(anon.status).toBe(401);
  });
});

describe('/observer sockets lose what their user loses', () => {
  it("a demoted CSO's and a former owner's sockets are closed and receive nothing more", async () => {
    const obs = await newObserver(owner.id, 'Guarded');
    const demoted = await createUser(t, 'cso');
    const heir = await createUser(t, 'public');
    const boss = await watch({ token: cso.accessToken, observerId: obs.id });
    const exAdmin = await watch({ token: demoted.accessToken, observerId: obs.id });
    const exOwner = await watch({ token: owner.accessToken, observerId: obs.id });

    const demote = await t.api('PATCH', `/api/admin/users/${demoted.id}`, {
      token: cso.accessToken,
      body: { role: 'carbon' },
    });
    expect(demote.status).toBe(200);
    expect((await exAdmin.next('chatError')).payload).toMatchObject({ code: 'forbidden' });
    await eventually(() => expect(exAdmin.socket.connected).toBe(false));

    const given = await t.api('PATCH', `/api/admin/instances/${obs.id}`, {
      token: cso.accessToken,
      body: { userId: heir.id },
    });
    expect(given.status).toBe(200);
    expect((await exOwner.next('chatError')).payload).toMatchObject({ code: 'forbidden' });
    await eventually(() => expect(exOwner.socket.connected).toBe(false));

    // The CSO still watches; the two closed sockets got no event after their refusal.
    const key = await t.deps.services.auth.createApiKey('after', ['sync:write'], null);
    const r = await t.api('POST', '/api/sync/ingest-event', {
      apiKey: key.key,
      body: { userId: heir.id, eventType: 'after', metadata: { instanceId: obs.id } },
    });
    expect(r.status).toBe(201);
    await boss.next('timeline_update', { match: (e) => e.eventType === 'after' });
    for (const s of [exAdmin, exOwner]) expect(s.events.map((e) => e.name)).not.toContain('timeline_update');
  });
});
