// Nested observers live (contract: "Observer": an observer's timeline holds the events of the
// observers below it, at any depth, and the root's every event): `timeline_update` and
// `instance_activity` reach the watchers of every observer above the event's, each socket once,
// as the HTTP timeline shows them. On PostgreSQL half the watchers sit on a second node, so the
// broadcast crosses nodes through the Socket.IO adapter; on PGlite (one process) every watcher is
// on the one node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  isPostgres,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import type { TestSocket } from '../../../test/socket-client.js';

let t: TestApp;
/** The node the second half of the watchers connect to: another node on PostgreSQL. */
let other: TestApp;
let cso: TestUser;
let owner: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  other = isPostgres() ? await createTestApp({}, { sameDatabaseAs: t }) : t;
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
});
afterAll(async () => {
  closeSockets();
  if (other !== t) await other.close();
  await t.close();
});

async function newInstance(body: Record<string, unknown>): Promise<{ id: number }> {
  const r = await t.api('POST', '/api/admin/instances', { token: cso.accessToken, body });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: number };
}

const observer = (name: string, parentInstanceId?: number) =>
  newInstance({ name, level: 8, source: 'portal', userId: owner.id, parentInstanceId });

const watch = (node: TestApp, auth: Record<string, unknown>) =>
  connectSocket(node.url, { namespace: '/observer', auth: { token: owner.accessToken, ...auth } });

async function ingest(instanceId: number, eventType: string) {
  const r = await t.api('POST', '/api/sync/ingest-event', {
    token: cso.accessToken,
    body: { userId: owner.id, eventType, eventText: eventType, metadata: { instanceId } },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: number };
}

/** The `timeline_update`s a socket received whose type starts with `prefix`. */
const updates = (s: TestSocket, prefix: string) =>
  s.events.filter((e) => e.name === 'timeline_update' && e.payload.eventType.startsWith(prefix));

/** An observer's HTTP timeline, oldest first, of these event types. */
async function history(observerId: number, types: string[], token = owner.accessToken) {
  const query = `order=asc&limit=200&eventType=${types.map(encodeURIComponent).join(',')}`;
  const r = await t.api('GET', `/api/observer/observer/${observerId}/timeline?${query}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body.events as unknown[];
}

describe('nested observers on /observer', () => {
  it("delivers a child's events to every observer above it, once a socket, as the timeline shows them", async () => {
    // A ← B ← C (each the parent of the next), D beside B under A, a Level-5 scene under C.
    const a = await observer('A');
    const b = await observer('B', a.id);
    const c = await observer('C', b.id);
    const d = await observer('D', a.id);
    const scene = await newInstance({
      name: 'scene',
      level: 5,
      source: 'game_client',
      parentInstanceId: c.id,
    });
    const rootId = await t.deps.services.timeline.rootObserverId();

    const sockets = {
      a: await watch(t, { observerId: a.id }),
      b: await watch(other, { observerId: b.id }),
      c: await watch(t, { observerId: c.id }),
      d: await watch(other, { observerId: d.id }),
      // One socket watching a parent and its child, another two ancestors of C.
      ac: await watch(other, { observerIds: [a.id, c.id] }),
      ab: await watch(t, { observerId: a.id, observerIds: [b.id] }),
    };
    const root = await connectSocket(other.url, {
      namespace: '/observer',
      auth: { token: cso.accessToken, observerId: rootId },
    });

    const p = `nested-${a.id}-`;
    const types = ['scene', 'b', 'd', 'c'].map((x) => p + x);
    await ingest(scene.id, `${p}scene`); // observer C
    await ingest(b.id, `${p}b`); // observer B
    await ingest(d.id, `${p}d`); // observer D
    await ingest(c.id, `${p}c`); // observer C
    // The last event each socket's timeline holds arriving is the signal: anything sent before it
    // (a duplicate included) came before it on the same connection.
    const last: Record<keyof typeof sockets, string> = {
      a: 'c',
      b: 'c',
      c: 'c',
      d: 'd',
      ac: 'c',
      ab: 'c',
    };
    for (const [name, s] of Object.entries(sockets))
      await s.next('timeline_update', {
        match: (e) => e.eventType === `${p}${last[name as keyof typeof sockets]}`,
      });
    await root.next('timeline_update', { match: (e) => e.eventType === `${p}c` });

    const expected: Record<keyof typeof sockets, number> = {
      a: a.id,
      b: b.id,
      c: c.id,
      d: d.id,
      ac: a.id,
      ab: a.id,
    };
    for (const [name, s] of Object.entries(sockets)) {
      const observerId = expected[name as keyof typeof sockets];
      // Exactly the events of the observer's HTTP timeline, in its order, each once.
      const live = updates(s, p).map((e) => e.payload);
      expect(live, name).toEqual(await history(observerId, types));
    }
    expect(updates(sockets.a, p).map((e) => e.payload.eventType)).toEqual([
      `${p}scene`,
      `${p}b`,
      `${p}d`,
      `${p}c`,
    ]);
    expect(updates(sockets.b, p).map((e) => e.payload.eventType)).toEqual([`${p}scene`, `${p}b`, `${p}c`]);
    expect(updates(sockets.c, p).map((e) => e.payload.eventType)).toEqual([`${p}scene`, `${p}c`]);
    expect(updates(sockets.d, p).map((e) => e.payload.eventType)).toEqual([`${p}d`]);
    // The root's timeline holds every event.
    expect(updates(root, p).map((e) => e.payload)).toEqual(await history(rootId, types, cso.accessToken));
    expect(updates(root, p)).toHaveLength(4);
  });

  it('reaches the observers above a child registered after they were first watched', async () => {
    const a = await observer('A2');
    const sa = await watch(other, { observerId: a.id });
    const b = await observer('B2', a.id);
    // An event of A first: A's chain is known to the node before B, and later C, exist.
    const p = `later-${a.id}-`;
    await ingest(a.id, `${p}a`);
    const c = await observer('C2', b.id);
    await ingest(c.id, `${p}c`);
    await sa.next('timeline_update', { match: (e) => e.eventType === `${p}c` });
    expect(updates(sa, p).map((e) => e.payload)).toEqual(await history(a.id, [`${p}a`, `${p}c`]));
    // The registrations of B2 and C2 (instance_created) reached A2's watcher too. A2's own may
    // as well: on PostgreSQL it reaches the other node by a notice, which can come after the
    // socket there began to watch.
    const created = sa.events
      .filter((e) => e.name === 'timeline_update' && e.payload.eventType === 'instance_created')
      .map((e) => e.payload.instanceId)
      .filter((id) => id !== a.id);
    expect(created).toEqual([b.id, c.id]);
  });

  it("sends a child's instance activity to the watchers above it, once a socket", async () => {
    const a = await observer('A3');
    const b = await observer('B3', a.id);
    const sa = await watch(other, { observerId: a.id });
    const sab = await watch(t, { observerIds: [a.id, b.id] });
    const scene = await newInstance({ name: 'scene 3', level: 5, source: 'portal', parentInstanceId: b.id });
    const ofScene = (x: { instanceId: number }) => x.instanceId === scene.id;
    // Its first activity (the registration), then an administrator switching it off.
    for (const s of [sa, sab]) await s.next('instance_activity', { match: (x) => ofScene(x) && x.isActive });
    const r = await t.api('PATCH', `/api/admin/instances/${scene.id}`, {
      token: cso.accessToken,
      body: { isActive: false },
    });
    expect(r.status).toBe(200);
    for (const s of [sa, sab]) {
      await s.next('instance_activity', { match: (x) => ofScene(x) && !x.isActive });
      const seen = s.events.filter((e) => e.name === 'instance_activity' && ofScene(e.payload));
      expect(seen.map((e) => e.payload.isActive)).toEqual([true, false]);
    }
  });

  it('admits a socket for several observers only when each is allowed; bad lists are refused', async () => {
    const mine = await observer('Mine');
    const theirs = await newInstance({ name: 'Theirs', level: 8, source: 'portal', userId: cso.id });
    await expect(watch(t, { observerIds: [mine.id, theirs.id] })).rejects.toMatchObject({
      code: 'forbidden',
      status: 403,
    });
    await expect(watch(t, { observerIds: [] })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(watch(t, { observerIds: Array.from({ length: 21 }, () => mine.id) })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    await expect(watch(t, { observerIds: ['x'] })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(watch(t, {})).rejects.toMatchObject({ code: 'validation_failed' });
    // The same observer named twice is watched once.
    const s = await watch(t, { observerId: mine.id, observerIds: [mine.id] });
    const p = `twice-${mine.id}-`;
    await ingest(mine.id, `${p}1`);
    await ingest(mine.id, `${p}2`);
    await s.next('timeline_update', { match: (e) => e.eventType === `${p}2` });
    expect(updates(s, p).map((e) => e.payload.eventType)).toEqual([`${p}1`, `${p}2`]);
  });
});
