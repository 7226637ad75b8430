// 5D navigation (contract: "Observer"): the state at a time (instances and their activity,
// balances and items rebuilt from the economy ledger, the newest events), correct to the
// microsecond before and after each change; awareness reconstructed; the range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { fixtures, type Fixtures } from '../../../test/observer-fixtures.js';

let t: TestApp;
let cso: TestUser;
let owner: TestUser;
let player: TestUser;
let other: TestUser;
let f: Fixtures;
let observer: { id: number };
let leaf: { id: number };
let itemId: number;

/** Exact times (µs, UTC) of the changes, and one microsecond before each. */
const at: Record<string, string> = {};
const before: Record<string, string> = {};

async function note(name: string, expression: string, params: unknown[]) {
  at[name] = await f.exact(expression, params);
  before[name] = await f.exact(`(${expression}) - interval '1 microsecond'`, params);
}
const ledgerTime = 'select created_at from economy_ledger where id = $1';

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
  player = await createUser(t, 'public');
  other = await createUser(t, 'public');
  f = fixtures(t, () => cso);
  observer = await f.instance({ name: 'Now and then', level: 8, source: 'portal', userId: owner.id });
  leaf = await f.instance({
    name: 'leaf',
    level: 5,
    source: 'game_client',
    parentInstanceId: observer.id,
    userId: player.id,
  });
  const inventory = t.deps.services.inventory;
  itemId = (await inventory.createItem({ name: 'Lantern', description: 'a light', type: 'tool' })).id;

  await note('earn', ledgerTime, [(await inventory.modifyCurrency(player.id, 100)).ledgerId]);
  await note('spend', ledgerTime, [(await inventory.modifyCurrency(player.id, -30)).ledgerId]);
  await note('gain', ledgerTime, [(await inventory.modifyInventory(player.id, itemId, 3)).ledgerId]);
  await note('lose', ledgerTime, [(await inventory.modifyInventory(player.id, itemId, -3)).ledgerId]);
  await inventory.modifyCurrency(other.id, 7);
  const patched = await t.api('PATCH', `/api/admin/instances/${leaf.id}`, {
    token: cso.accessToken,
    body: { isActive: false },
  });
  expect(patched.status).toBe(200);
  await note(
    'off',
    `select timeline_at from timeline_events where instance_id = $1 and event_type = 'instance_activity_changed'`,
    [leaf.id],
  );
  await t.deps.services.inventory.modifyCurrency(player.id, 1); // after everything: never in a past state
});
afterAll(() => t.close());

async function state(when: string, extra = '', token = owner.accessToken) {
  const r = await t.api(
    'GET',
    `/api/observer/observer/${observer.id}/5d-navigation/state?at=${encodeURIComponent(when)}${extra}`,
    { token },
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const playerIn = (s: { users: { userId: number; items: unknown[] }[] }) =>
  s.users.find((u) => u.userId === player.id)!;
const plusMs = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

describe('5D state', () => {
  it('balances from the ledger: a change is in the state from its exact time on, not a microsecond before', async () => {
    expect(playerIn(await state(before.earn!))).toEqual({ userId: player.id, energy_coins: 0, items: [] });
    expect(playerIn(await state(at.earn!))).toMatchObject({ energy_coins: 100 });
    // The contract's own example: a change a millisecond after `at` is not in the state at `at`.
    expect(playerIn(await state(plusMs(at.earn!, -1)))).toMatchObject({ energy_coins: 0 });
    expect(playerIn(await state(before.spend!))).toMatchObject({ energy_coins: 100 });
    expect(playerIn(await state(at.spend!))).toMatchObject({ energy_coins: 70 });
  });

  it('items from the ledger: held from the change on, gone once the quantity is back to 0', async () => {
    expect(playerIn(await state(before.gain!)).items).toEqual([]);
    expect(playerIn(await state(at.gain!)).items).toEqual([
      { item_id: itemId, name: 'Lantern', quantity: 3 },
    ]);
    expect(playerIn(await state(before.lose!)).items).toHaveLength(1);
    expect(playerIn(await state(at.lose!)).items).toEqual([]);
  });

  it("an instance's activity from its activity-change events; instances created later are not there", async () => {
    const leafIn = (s: { instances: { id: number; isActive: boolean }[] }) =>
      s.instances.find((i) => i.id === leaf.id);
    const was = await state(before.off!);
    expect(leafIn(was)).toMatchObject({ isActive: true, userId: player.id, name: 'leaf' });
    const then = await state(at.off!);
    expect(leafIn(then)).toMatchObject({ isActive: false });
    // The newest event up to the change is the change itself; a microsecond before, it is not.
    expect(then.events[0]).toMatchObject({
      eventType: 'instance_activity_changed',
      metadata: { isActive: false },
    });
    expect(then.eventCount).toBe(was.eventCount + 1);
    expect(was.events.map((e: { eventType: string }) => e.eventType)).not.toContain(
      'instance_activity_changed',
    );

    const created = await f.instance({
      name: 'late',
      level: 5,
      source: 'portal',
      parentInstanceId: observer.id,
    });
    const createdAt = await f.exact('select created_at from instances where id = $1', [created.id]);
    const earlier = await f.exact(
      `(select created_at from instances where id = $1) - interval '1 microsecond'`,
      [created.id],
    );
    expect((await state(earlier)).instances.map((i: { id: number }) => i.id)).not.toContain(created.id);
    expect((await state(createdAt)).instances.map((i: { id: number }) => i.id)).toContain(created.id);
  });

  it("users are the instances' owners plus userId; the newest events, at most `events`", async () => {
    // A CSO sees any user's balance; the owner's view is observer.owner-scope.test.ts's.
    const s = await state(at.off!, `&userId=${other.id}&events=2`, cso.accessToken);
    expect(s.observerId).toBe(observer.id);
    expect(s.at).toBe(new Date(at.off!).toISOString());
    expect(s.users.map((u: { userId: number }) => u.userId)).toEqual([player.id, other.id]);
    expect(s.users[1]).toEqual({ userId: other.id, energy_coins: 7, items: [] });
    expect(s.events).toHaveLength(2);
    expect(s.eventCount).toBeGreaterThan(2);
  });

  it('a future time is now', async () => {
    const s = await state('2999-01-01T00:00:00+01:00');
    expect(Date.parse(s.at)).toBeLessThanOrEqual(Date.now());
    expect(playerIn(s)).toMatchObject({ energy_coins: 71 });
  });

  it('refuses a missing or offset-less time and bad sizes, with problem+json', async () => {
    const base = `/api/observer/observer/${observer.id}/5d-navigation`;
    for (const [path, field] of [
      [`${base}/state`, 'querystring.at'],
      [`${base}/state?at=2026-01-01T00:00:00`, 'querystring.at'],
      [`${base}/state?at=yesterday`, 'querystring.at'],
      [`${base}/state?at=2026-01-01T00:00:00Z&events=0`, 'querystring.events'],
      [`${base}/state?at=2026-01-01T00:00:00Z&events=201`, 'querystring.events'],
      [`${base}/state?at=2026-01-01T00:00:00Z&userId=x`, 'querystring.userId'],
      [`${base}/reconstruct`, 'querystring.at'],
      [`${base}/reconstruct?at=2026-01-01T00:00:00Z&limit=201`, 'querystring.limit'],
    ] as const) {
      const r = await t.api('GET', path, { token: cso.accessToken });
      expect(r.status, path).toBe(400);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(
        r.body.errors.map((e: { path: string }) => e.path),
        path,
      ).toContain(field);
    }
  });
});

describe('5D reconstruct and range', () => {
  it('the last reflection, the memories about the observer, the timeline and the instances, as of the time', async () => {
    const reflected = await t.api('POST', `/api/observer/observer/${observer.id}/reflection`, {
      token: owner.accessToken,
      body: {},
    });
    expect(reflected.status).toBe(201);
    const { memoryId, text } = reflected.body.reflection;
    const madeAt = await f.exact('select created_at from memories where id = $1', [memoryId]);
    const justBefore = await f.exact(
      `(select created_at from memories where id = $1) - interval '1 microsecond'`,
      [memoryId],
    );
    const get = async (when: string, limit = 50) => {
      const r = await t.api(
        'GET',
        `/api/observer/observer/${observer.id}/5d-navigation/reconstruct?at=${encodeURIComponent(when)}&limit=${limit}`,
        { token: cso.accessToken },
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const then = await get(justBefore);
    expect(then).toMatchObject({ observerId: observer.id, lastReflection: null, memories: [] });
    const now = await get(madeAt);
    expect(now.lastReflection).toEqual({ memoryId, text, createdAt: new Date(madeAt).toISOString() });
    expect(now.memories).toEqual([
      {
        id: memoryId,
        userId: await t.deps.services.characters.assistantUserId(),
        content: text,
        source: 'observer_reflection',
        metadata: expect.objectContaining({ observerId: observer.id }),
        createdAt: new Date(madeAt).toISOString(),
      },
    ]);

    const beforeOff = await get(before.off!);
    const afterOff = await get(at.off!);
    expect(beforeOff.instances).toEqual({ total: 1, active: 1 });
    expect(afterOff.instances).toEqual({ total: 1, active: 0 });
    expect(afterOff.timeline.eventCount).toBe(beforeOff.timeline.eventCount + 1);
    expect(afterOff.timeline.byType.instance_activity_changed).toBe(1);
    expect(beforeOff.timeline.byType.instance_activity_changed).toBeUndefined();
    expect(afterOff.timeline).toMatchObject({
      firstAt: expect.any(String),
      lastAt: new Date(at.off!).toISOString(),
    });
    const nothing = await get('2000-01-01T00:00:00Z');
    expect(nothing).toMatchObject({
      lastReflection: null,
      memories: [],
      timeline: { eventCount: 0, firstAt: null, lastAt: null, byType: {} },
      instances: { total: 0, active: 0 },
    });
  });

  it('the range: first and last timelineAt and the count; nulls for an observer without events', async () => {
    const r = await t.api('GET', `/api/observer/observer/${observer.id}/5d-navigation/range`, {
      token: owner.accessToken,
    });
    expect(r.status).toBe(200);
    const page = (
      await t.api('GET', `/api/observer/observer/${observer.id}/timeline?limit=200`, {
        token: owner.accessToken,
      })
    ).body.events;
    expect(r.body).toEqual({
      observerId: observer.id,
      min: page.at(-1).timelineAt,
      max: page[0].timelineAt,
      eventCount: page.length,
    });
    // An observer registered by a platform straight into the registry, never seen.
    const quiet = await t.deps.db
      .insertInto('instances')
      .values({
        name: 'quiet',
        level: 8,
        source: 'portal',
        persona_id: null,
        parent_instance_id: null,
        state_machine_instance_id: null,
        channel_id: null,
        user_id: owner.id,
        metadata: {},
        last_seen_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const empty = await t.api('GET', `/api/observer/observer/${quiet.id}/5d-navigation/range`, {
      token: owner.accessToken,
    });
    expect(empty.body).toEqual({ observerId: quiet.id, min: null, max: null, eventCount: 0 });
  });
});
