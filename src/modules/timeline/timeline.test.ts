// The timeline (spec: "Events"): `record` writes in the caller's transaction, links each event to
// its observer and publishes only what committed; and the instance registry behind
// /api/admin/instances (contract: "Instances, timeline and sync").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestApp,
  createUser,
  eventually,
  isPostgres,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { sql, transaction, type Executor } from '../../platform/db/database.js';
import { AppError } from '../../platform/http/problem.js';
import type { InstanceActivity, RecordInput, TimelineEvent } from './index.js';
import { activityUpdate, IDLE_AFTER_MS, observerOf } from './timeline.rules.js';

let t: TestApp;
let cso: TestUser;
let owner: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
});
afterAll(() => t.close());

const timeline = () => t.deps.services.timeline;

async function newInstance(body: Record<string, unknown>): Promise<{ id: number }> {
  const r = await t.api('POST', '/api/admin/instances', { token: cso.accessToken, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: number };
}

/** Everything the bus publishes from now on, until `stop()`. */
function published() {
  const seen: {
    timeline: TimelineEvent[];
    activity: { observerIds: readonly number[]; activity: InstanceActivity }[];
  } = { timeline: [], activity: [] };
  const offs = [
    t.deps.bus.on('timeline.recorded', ({ event }) => void seen.timeline.push(event)),
    t.deps.bus.on('instance.activity', (a) => void seen.activity.push(a)),
  ];
  return { seen, stop: () => offs.forEach((off) => off()) };
}

/** An instance as a platform registers it before it was ever active (never seen). */
async function unseenInstance(name: string): Promise<number> {
  const row = await t.deps.db
    .insertInto('instances')
    .values({
      name,
      level: 5,
      source: 'game_client',
      persona_id: 6,
      parent_instance_id: null,
      state_machine_instance_id: null,
      channel_id: null,
      user_id: null,
      metadata: {},
      last_seen_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const lastSeenAt = async (id: number) =>
  (
    await t.deps.db
      .selectFrom('instances')
      .select('last_seen_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).last_seen_at;

/** Records one event in a transaction of its own, as a module does with its change. */
const record = (input: RecordInput) => transaction(t.deps.db, (uow) => timeline().record(uow, input));

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

describe('timeline.record', () => {
  it("writes in the caller's transaction and publishes only once it committed", async () => {
    const instanceId = await unseenInstance('first light');
    const bus = published();
    try {
      const event = await transaction(t.deps.db, async (uow) => {
        const e = await timeline().record(uow, {
          eventType: 'committed_probe',
          eventText: 'seen',
          userId: owner.id,
          instanceId,
        });
        // Stored in the transaction (it reads its own write), announced to nobody yet.
        expect(await timeline().list({ eventType: 'committed_probe', limit: 5 }, uow.trx)).toEqual([e]);
        expect(bus.seen).toEqual({ timeline: [], activity: [] });
        return e;
      });
      const rootId = await timeline().rootObserverId();
      expect(bus.seen.timeline).toEqual([event]);
      // The instance's first activity: announced after commit, and its lastSeenAt is the event's time.
      expect(bus.seen.activity).toEqual([
        { observerIds: [rootId], activity: { instanceId, isActive: true, lastSeenAt: event.timelineAt } },
      ]);
      expect((await lastSeenAt(instanceId))?.toISOString()).toBe(event.timelineAt);
      expect(await timeline().list({ eventType: 'committed_probe', limit: 5 })).toEqual([event]);
    } finally {
      bus.stop();
    }
  });

  it('is rolled back with the change: nothing stored, nothing published, the instance untouched', async () => {
    const instanceId = await unseenInstance('never happened');
    const bus = published();
    try {
      await expect(
        transaction(t.deps.db, async (uow) => {
          await timeline().record(uow, { eventType: 'rolled_back_probe', userId: owner.id, instanceId });
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      expect(await timeline().list({ eventType: 'rolled_back_probe', limit: 5 })).toEqual([]);
      expect(bus.seen).toEqual({ timeline: [], activity: [] });
      expect(await lastSeenAt(instanceId)).toBeNull();
    } finally {
      bus.stop();
    }
  });

  it('links each event to its observer: the root, the Level-8 parent, or the observer itself', async () => {
    const rootId = await timeline().rootObserverId();
    const obs = await newInstance({ name: 'Region', level: 8, source: 'state_machine', personaId: 2 });
    const child = await newInstance({
      name: 'Scene',
      level: 5,
      source: 'game_client',
      personaId: 3,
      parentInstanceId: obs.id,
    });
    const orphan = await newInstance({ name: 'Stray', level: 5, source: 'portal' });
    const cases: [number | undefined, number][] = [
      [undefined, rootId],
      [obs.id, obs.id],
      [child.id, obs.id],
      [orphan.id, rootId],
    ];
    for (const [instanceId, observerId] of cases) {
      const e = await record({ eventType: 'linked', instanceId });
      expect(e, `instance ${instanceId}`).toMatchObject({ instanceId: instanceId ?? null, observerId });
      const stored = await timeline().list({ observerId, eventType: 'linked', limit: 1 });
      expect(stored).toEqual([e]);
    }
  });

  it("enriches with the instance's metadata, source and persona unless the caller gives its own", async () => {
    const obs = await newInstance({ name: 'Valley', level: 8, source: 'chat_platform', personaId: 4 });
    const defaults = await record({
      eventType: 'enriched',
      userId: owner.id,
      instanceId: obs.id,
      metadata: { a: 1 },
    });
    expect(defaults).toMatchObject({
      userId: owner.id,
      eventText: '',
      source: 'chat_platform',
      personaId: 4,
      metadata: {
        a: 1,
        instance: { id: obs.id, name: 'Valley', level: 8, source: 'chat_platform', personaId: 4 },
      },
    });
    expect(Date.parse(defaults.timelineAt)).not.toBeNaN();
    const own = await record({
      eventType: 'enriched',
      instanceId: obs.id,
      source: 'import',
      personaId: 9,
      occurredAt: new Date('2020-02-02T02:02:02Z'),
    });
    expect(own).toMatchObject({ source: 'import', personaId: 9, occurredAt: '2020-02-02T02:02:02.000Z' });
    // Without an instance: the source is the system's and nothing is added to the metadata.
    expect(await record({ eventType: 'enriched' })).toMatchObject({
      source: 'system',
      personaId: null,
      metadata: {},
    });
  });

  it('touches each instance of a batch once, at its first event’s time, in one statement', async () => {
    const first = await unseenInstance('batch first');
    const second = await unseenInstance('batch second');
    // The higher id first: the rows are locked in id order, whatever the events' order.
    const events = await transaction(t.deps.db, (uow) =>
      timeline().recordMany(
        uow,
        [second, first, second].map((instanceId) => ({ eventType: 'batch_touch', instanceId })),
      ),
    );
    expect((await lastSeenAt(second))?.toISOString()).toBe(events[0]!.timelineAt);
    expect((await lastSeenAt(first))?.toISOString()).toBe(events[1]!.timelineAt);
  });

  // Deterministic without racing two batches: a transaction standing for another node's batch
  // holds the lower row, then takes the higher one, as its batch, locking in id order, would.
  // Touching in its events' order (the higher first), the batch would hold the higher row while it
  // waits for the lower, and the other's NOWAIT would fail (the deadlock, 40P01 once the detector
  // ran). Locking in id order, the batch waits holding nothing. PGlite has one connection.
  it.skipIf(!isPostgres())('locks the instances it touches in ascending id order', async () => {
    const low = await unseenInstance('lock order low');
    const high = await unseenInstance('lock order high');
    let release!: () => void;
    const released = new Promise<void>((ok) => (release = ok));
    let holding!: () => void;
    const held = new Promise<void>((ok) => (holding = ok));
    const lock = (trx: Executor, id: number, nowait = false) =>
      sql`select id from instances where id = ${id} for no key update ${sql.raw(nowait ? 'nowait' : '')}`.execute(
        trx,
      );
    const other = transaction(t.deps.db, async ({ trx }) => {
      await lock(trx, low);
      holding();
      await released;
      await lock(trx, high, true);
    });
    await held;
    const batch = transaction(t.deps.db, (uow) =>
      timeline().recordMany(
        uow,
        [high, low].map((instanceId) => ({ eventType: 'lock_order', instanceId })),
      ),
    );
    // The batch waits for the lower row.
    await eventually(async () => {
      const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%instances%'`.execute(
        t.deps.db,
      );
      expect(r.rows[0]!.n).toBe(1);
    });
    release();
    await other;
    const events = await batch;
    expect((await lastSeenAt(high))?.toISOString()).toBe(events[0]!.timelineAt);
    expect((await lastSeenAt(low))?.toISOString()).toBe(events[1]!.timelineAt);
  });

  it('refuses an unknown instance as validation_failed, storing nothing', async () => {
    const err = await record({ eventType: 'nowhere', instanceId: 999999 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).toProblem()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors: [{ path: 'instanceId' }],
    });
    expect(await timeline().list({ eventType: 'nowhere', limit: 5 })).toEqual([]);
  });
});

describe('instance registry', () => {
  it('has a root observer from first start, owned by the first CSO once one exists', async () => {
    const rootId = await timeline().ensureRootObserver();
    const root = await t.api('GET', `/api/admin/instances/${rootId}`, { token: cso.accessToken });
    expect(root.body).toMatchObject({ name: 'Observer', level: 8, isRoot: true, userId: cso.id });
    // Starting again (another node) creates no second root.
    await Promise.all([timeline().ensureRootObserver(), timeline().ensureRootObserver()]);
    const roots = await t.deps.db.selectFrom('instances').select('id').where('is_root', '=', true).execute();
    expect(roots).toEqual([{ id: rootId }]);
  });

  it('creates, shows and patches instances; creation is a timeline event', async () => {
    const obs = await newInstance({ name: 'Country', level: 8, source: 'portal', userId: owner.id });
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
    const events = await timeline().list({ observerId: obs.id, limit: 10 });
    expect(events.find((e) => e.instanceId === l5.body.id)).toMatchObject({
      eventType: 'instance_created',
      source: 'chat_platform',
      personaId: 3,
      userId: cso.id,
      metadata: { createdByUserId: cso.id, instance: { level: 5, name: 'Portal fragment' } },
    });

    const patched = await t.api('PATCH', `/api/admin/instances/${l5.body.id}`, {
      token: cso.accessToken,
      body: { isActive: false, metadata: { b: 2 }, channelId: null },
    });
    expect(patched.body).toMatchObject({ isActive: false, metadata: { b: 2 }, channelId: null });
    const shown = await t.api('GET', `/api/admin/instances/${l5.body.id}`, { token: cso.accessToken });
    expect(shown.body).toEqual(patched.body);
  });

  it('lists with filters and pages', async () => {
    // Everything under one observer of this test's own, so other tests' instances do not count.
    const parent = await newInstance({ name: 'Pages', level: 8, source: 'portal' });
    const under = { parentInstanceId: parent.id };
    const made = [
      await newInstance({ name: 'p1', level: 5, source: 'game_client', ...under }),
      await newInstance({ name: 'p2', level: 5, source: 'game_client', ...under }),
      await newInstance({ name: 'p3', level: 5, source: 'portal', ...under }),
      await newInstance({ name: 'p4', level: 5, source: 'portal', ...under }),
      await newInstance({ name: 'p5', level: 8, source: 'portal', ...under }),
    ].map((i) => i.id);
    await t.api('PATCH', `/api/admin/instances/${made[3]}`, {
      token: cso.accessToken,
      body: { isActive: false },
    });

    const list = async (query: string) => {
      const r = await t.api('GET', `/api/admin/instances?parentInstanceId=${parent.id}${query}`, {
        token: cso.accessToken,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { ...r.body, ids: r.body.instances.map((i: { id: number }) => i.id) };
    };
    expect(await list('')).toMatchObject({ total: 5, ids: made, limit: 50, offset: 0 });
    expect(await list('&level=5')).toMatchObject({ total: 4, ids: made.slice(0, 4) });
    expect(await list('&level=8')).toMatchObject({ total: 1, ids: [made[4]] });
    expect(await list('&source=game_client')).toMatchObject({ total: 2, ids: made.slice(0, 2) });
    expect(await list('&active=false')).toMatchObject({ total: 1, ids: [made[3]] });
    expect(await list('&active=true&source=portal&level=5')).toMatchObject({ total: 1, ids: [made[2]] });
    // Pages in id order; the total is the whole filtered count on every page.
    expect(await list('&limit=2')).toMatchObject({ total: 5, ids: made.slice(0, 2), limit: 2, offset: 0 });
    expect(await list('&limit=2&offset=2')).toMatchObject({ total: 5, ids: made.slice(2, 4), offset: 2 });
    expect(await list('&limit=2&offset=4')).toMatchObject({ total: 5, ids: made.slice(4) });
    expect(await list('&offset=5')).toMatchObject({ total: 5, ids: [] });
  });

  it('rejects bad input, unknown references, non-admins and the unauthenticated', async () => {
    const post = (body: unknown) => t.api('POST', '/api/admin/instances', { token: cso.accessToken, body });
    const bad = await post({ name: 'x', level: 6, source: 'portal' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(bad.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'body.level' }] });
    expect((await post({ name: 'x', level: 5, source: 'nowhere' })).status).toBe(400);
    expect((await post({ name: '', level: 5, source: 'portal' })).status).toBe(400);
    expect(
      (await post({ name: 'x', level: 5, source: 'portal', parentInstanceId: 999999 })).body,
    ).toMatchObject({
      status: 400,
      errors: [{ path: 'parentInstanceId' }],
    });
    const leaf = await newInstance({ name: 'leaf', level: 5, source: 'portal' });
    expect(
      (await post({ name: 'x', level: 5, source: 'portal', parentInstanceId: leaf.id })).body,
    ).toMatchObject({
      status: 400,
      errors: [{ path: 'parentInstanceId' }],
    });
    expect((await post({ name: 'x', level: 8, source: 'portal', userId: 999999 })).body).toMatchObject({
      status: 400,
      errors: [{ path: 'userId' }],
    });
    const patch = (id: number | string, body: unknown) =>
      t.api('PATCH', `/api/admin/instances/${id}`, { token: cso.accessToken, body });
    expect((await patch(leaf.id, {})).status).toBe(400);
    expect((await patch(leaf.id, { level: 8 })).status).toBe(400);
    expect((await patch(leaf.id, { userId: 999999 })).body).toMatchObject({ errors: [{ path: 'userId' }] });
    for (const query of ['level=6', 'limit=0', 'limit=201', 'offset=-1', 'active=yes', 'source=nowhere']) {
      const r = await t.api('GET', `/api/admin/instances?${query}`, { token: cso.accessToken });
      expect(r.status, query).toBe(400);
    }
    const missing = await t.api('GET', '/api/admin/instances/999999', { token: cso.accessToken });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });
    expect((await patch(999999, { isActive: true })).status).toBe(404);
    expect((await t.api('GET', '/api/admin/instances/abc', { token: cso.accessToken })).status).toBe(400);

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
