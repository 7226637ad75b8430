// The owner's view of an observer below the root (contract: "Observer"): its answers name only the
// users its instances concern (who owns it or one of its instances, whom its timeline's events
// name) and their balances. An outside user's coins are not in `state?userId=`, their memories
// not in `reconstruct`, their events not in the exports, their instance not in the summary. A CSO
// or an admin sees every user, as does anyone on the root.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { fixtures, parseCsv, type Fixtures } from '../../../test/observer-fixtures.js';
import { CSV_COLUMNS } from './observer.rules.js';

let t: TestApp;
let cso: TestUser;
let admin: TestUser;
/** Owns the child observer. */
let owner: TestUser;
/** Owns the parent observer, above the child. */
let parentOwner: TestUser;
/** Owns a Level-5 instance of the child. */
let player: TestUser;
/** Owns nothing; an event of one of the child's instances names them. */
let visitor: TestUser;
/** Owns a Level-5 instance of an observer below the child. */
let deep: TestUser;
/** Owns a Level-5 instance beside the child, under the parent: nothing of the child's. */
let outsider: TestUser;
let f: Fixtures;
let parent: { id: number };
let child: { id: number };
let rootId: number;

const NOW = '2999-01-01T00:00:00Z'; // a future time is now
const NO_SUCH_USER = 2_000_000_000;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  admin = await createUser(t, 'developer');
  owner = await createUser(t, 'public');
  parentOwner = await createUser(t, 'public');
  player = await createUser(t, 'public');
  visitor = await createUser(t, 'public');
  deep = await createUser(t, 'public');
  outsider = await createUser(t, 'public');
  f = fixtures(t, () => admin);
  parent = await f.instance({ name: 'parent', level: 8, source: 'portal', userId: parentOwner.id });
  child = await f.instance({
    name: 'child',
    level: 8,
    source: 'portal',
    parentInstanceId: parent.id,
    userId: owner.id,
  });
  const level5 = (name: string, parentInstanceId: number, userId: number) =>
    f.instance({ name, level: 5, source: 'game_client', parentInstanceId, userId });
  const shard = await level5('shard', child.id, player.id);
  const grandchild = await f.instance({
    name: 'grandchild',
    level: 8,
    source: 'portal',
    parentInstanceId: child.id,
  });
  await level5('deep shard', grandchild.id, deep.id);
  const beside = await level5('beside', parent.id, outsider.id);
  await f.record({
    eventType: 'visit',
    eventText: 'visitor came by',
    instanceId: shard.id,
    userId: visitor.id,
  });
  await f.record({
    eventType: 'trade',
    eventText: 'outsider traded',
    instanceId: beside.id,
    userId: outsider.id,
  });

  const inventory = t.deps.services.inventory;
  for (const [u, coins] of [
    [player, 10],
    [visitor, 20],
    [deep, 30],
    [outsider, 40],
  ] as const)
    await inventory.modifyCurrency(u.id, coins);

  rootId = await t.deps.services.timeline.rootObserverId();
  // The memories about the child, oldest first: the visitor's, the owner's reflection, then the
  // outsider's (the newest: a filter applied after the limit would come up short).
  await remember(visitor, 'visitor note', child.id);
  const reflected = await t.api('POST', `/api/observer/observer/${child.id}/reflection`, {
    token: owner.accessToken,
    body: {},
  });
  expect(reflected.status, reflected.text).toBe(201);
  await remember(outsider, 'outsider secret', child.id);
  await remember(outsider, 'outsider at the root', rootId);
});
afterAll(() => t.close());

async function remember(user: TestUser, content: string, observerId: number) {
  const r = await t.api('POST', '/api/assistant/memory', {
    token: user.accessToken,
    body: { content, source: 'shared', metadata: { observerId } },
  });
  expect(r.status, r.text).toBe(201);
}

async function get(path: string, user: TestUser) {
  const r = await t.api('GET', path, { token: user.accessToken });
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r;
}

const base = (observerId: number) => `/api/observer/observer/${observerId}`;
const state = async (observerId: number, user: TestUser, userId?: number) =>
  (
    await get(
      `${base(observerId)}/5d-navigation/state?at=${NOW}${userId === undefined ? '' : `&userId=${userId}`}`,
      user,
    )
  ).body as { users: { userId: number; energy_coins: number }[] };
const usersOf = (s: { users: { userId: number; energy_coins: number }[] }) =>
  Object.fromEntries(s.users.map((u) => [u.userId, u.energy_coins]));
/** Whether a JSON answer names the user as a `userId` anywhere. */
const names = (body: unknown, user: TestUser) =>
  new RegExp(`"userId":${user.id}[,}]`).test(JSON.stringify(body));

describe("5D state: the owner's view of a child observer", () => {
  it('lists the owners of its instances at any depth, with their coins', async () => {
    expect(usersOf(await state(child.id, owner))).toEqual({ [player.id]: 10, [deep.id]: 30 });
  });

  it("gives no outside user's coins through userId, as for a user that does not exist", async () => {
    const plain = await state(child.id, owner);
    const outside = await state(child.id, owner, outsider.id);
    expect(outside.users).toEqual(plain.users);
    expect(names(outside, outsider)).toBe(false);
    expect((await state(child.id, owner, NO_SUCH_USER)).users).toEqual(plain.users);
  });

  it('gives the coins of a user its events name, and of its owner', async () => {
    expect(usersOf(await state(child.id, owner, visitor.id))).toMatchObject({ [visitor.id]: 20 });
    expect(usersOf(await state(child.id, owner, owner.id))).toMatchObject({ [owner.id]: 0 });
  });

  it("the parent's owner sees the user of the instance under the parent", async () => {
    expect(usersOf(await state(parent.id, parentOwner, outsider.id))).toMatchObject({ [outsider.id]: 40 });
  });

  it("a CSO and an admin read anyone's coins, as before", async () => {
    for (const who of [cso, admin]) {
      expect(usersOf(await state(child.id, who, outsider.id))).toMatchObject({ [outsider.id]: 40 });
      expect(usersOf(await state(child.id, who, NO_SUCH_USER))).toMatchObject({ [NO_SUCH_USER]: 0 });
    }
  });

  it("the root's owner who is no CSO or admin reads anyone's (everyone is under the root)", async () => {
    const rootOwner = await createUser(t, 'public');
    const patched = await t.api('PATCH', `/api/admin/instances/${rootId}`, {
      token: admin.accessToken,
      body: { userId: rootOwner.id },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(usersOf(await state(rootId, rootOwner, outsider.id))).toMatchObject({ [outsider.id]: 40 });
    const at = await get(`${base(rootId)}/5d-navigation/reconstruct?at=${NOW}`, rootOwner);
    expect(at.body.memories.map((m: { content: string }) => m.content)).toContain('outsider at the root');
  });
});

describe("reconstruct: the owner's view of a child observer", () => {
  const reconstruct = async (user: TestUser, limit = 50) =>
    (await get(`${base(child.id)}/5d-navigation/reconstruct?at=${NOW}&limit=${limit}`, user)).body;

  it("leaves out an outside user's memories, before the limit; keeps its reflection and its users'", async () => {
    const seen = await reconstruct(owner);
    expect(seen.memories.map((m: { content: string }) => m.content)).toEqual([
      expect.stringContaining('Offline digest'),
      'visitor note',
    ]);
    expect(names(seen, outsider)).toBe(false);
    expect(seen.lastReflection.text).toContain('visitor came by');
    expect(seen.lastReflection.text).not.toContain('outsider');
    const two = await reconstruct(owner, 2);
    expect(two.memories).toEqual(seen.memories);
  });

  it("a CSO and an admin see every memory about it, the outsider's too", async () => {
    for (const who of [cso, admin]) {
      const all = await reconstruct(who);
      expect(all.memories.map((m: { content: string }) => m.content)).toEqual([
        'outsider secret',
        expect.stringContaining('Offline digest'),
        'visitor note',
      ]);
      expect(all.memories[0].userId).toBe(outsider.id);
    }
  });
});

describe("exports and figures: the owner's view of a child observer", () => {
  it('the JSON and CSV exports name its users, never the outside one', async () => {
    const json = await get(`${base(child.id)}/timeline?export=json&order=asc`, owner);
    const users = new Set(json.body.events.map((e: { userId: number | null }) => e.userId));
    expect(users).toContain(visitor.id);
    expect(users).not.toContain(outsider.id);
    expect(json.text).not.toContain('outsider traded');

    const csv = parseCsv((await get(`${base(child.id)}/timeline?export=csv&order=asc`, owner)).text);
    const userColumn = CSV_COLUMNS.indexOf('userId');
    const csvUsers = csv.slice(1).map((row) => row[userColumn]);
    expect(csvUsers).toContain(String(visitor.id));
    expect(csvUsers).not.toContain(String(outsider.id));
    expect(csv.slice(1)).toHaveLength(json.body.events.length);

    const filtered = await get(`${base(child.id)}/timeline?export=json&userId=${outsider.id}`, owner);
    expect(filtered.body.events).toEqual([]);
  });

  it("an admin's export of the parent names the outside user (the events exist)", async () => {
    const json = await get(`${base(parent.id)}/timeline?export=json&userId=${outsider.id}`, admin);
    expect(json.body.events.map((e: { eventText: string }) => e.eventText)).toContain('outsider traded');
  });

  it('the summary and the dashboard count its instances and events only', async () => {
    const timeline = await get(`${base(child.id)}/timeline/paginated?pageSize=200`, owner);
    const summary = (await get(`${base(child.id)}/summary`, owner)).body;
    // The shard, the grandchild and the deep shard; not the instance beside it.
    expect(summary.instances.total).toBe(3);
    expect(summary.events.total).toBe(timeline.body.total);
    expect(names(summary, outsider)).toBe(false);
    const dashboard = (await get(`/api/subject-consciousness/dashboard/${child.id}`, owner)).body;
    expect(dashboard.instances.total).toBe(3);
    expect(dashboard.activity24h.events).toBe(summary.events.inWindow);
    expect(names(dashboard, outsider)).toBe(false);
  });
});
