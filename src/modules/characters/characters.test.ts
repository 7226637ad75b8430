// Characters (contract: "Characters and their state"): the seeded assistant, NPC admin CRUD,
// character state, relationships and quests, and who may reach them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;
let player: TestUser;
let other: TestUser;

beforeAll(async () => {
  t = await createTestApp({ ASSISTANT_NAME: 'Aria' });
  admin = await createUser(t, 'developer');
  player = await createUser(t, 'public');
  other = await createUser(t, 'public');
});
afterAll(() => t.close());

describe('the assistant', () => {
  it('exists once, as a silicon + npc user, however often seeding runs', async () => {
    const chars = t.deps.services.characters;
    const ids = await Promise.all([
      chars.ensureAssistant('Aria'),
      chars.ensureAssistant('Aria'),
      chars.ensureAssistant('Aria'),
    ]);
    expect(new Set(ids).size).toBe(1);
    const user = await t.deps.services.users.get(ids[0]);
    expect(user).toMatchObject({ role: 'silicon', account_type: 'npc', email: null });
    const profiles = await t.deps.db
      .selectFrom('character_profiles')
      .select('user_id')
      .where('is_assistant', '=', true)
      .execute();
    expect(profiles).toHaveLength(1);
    const npc = await t.api('GET', `/api/admin/data/npcs/${ids[0]}`, { token: admin.accessToken });
    expect(npc.body).toMatchObject({ isAssistant: true, personaType: 'assistant' });
    expect(
      (await t.api('DELETE', `/api/admin/data/npcs/${ids[0]}`, { token: admin.accessToken })).status,
    ).toBe(409);
  });
});

describe('NPC admin CRUD and state', () => {
  it('creates, lists, replaces, reads state, changes state and deletes', async () => {
    const created = await t.api('POST', '/api/admin/data/npcs', {
      token: admin.accessToken,
      body: { name: 'Smith', description: 'forges', personaType: 'merchant', metadata: { town: 'A' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Smith',
      description: 'forges',
      personaType: 'merchant',
      metadata: { town: 'A' },
      isAssistant: false,
    });
    const id = created.body.id;
    expect(await t.deps.services.users.get(id)).toMatchObject({ role: 'silicon', account_type: 'npc' });

    const list = await t.api('GET', '/api/admin/data/npcs?limit=200', { token: admin.accessToken });
    expect(list.body.npcs.map((n: { id: number }) => n.id)).toContain(id);

    const put = await t.api('PUT', `/api/admin/data/npcs/${id}`, {
      token: admin.accessToken,
      body: { name: 'Old Smith', description: 'retired' },
    });
    expect(put.body).toMatchObject({
      id,
      name: 'Old Smith',
      description: 'retired',
      personaType: null,
      metadata: {},
    });

    const state = await t.api('GET', `/api/admin/data/npcs/${id}/state`, { token: admin.accessToken });
    expect(state.body).toEqual({
      persona: { name: 'Old Smith', description: 'retired', personaType: null },
      emotions: {},
      config: {},
    });
    const changed = await t.api('PUT', `/api/admin/data/npcs/${id}/state`, {
      token: admin.accessToken,
      body: { persona: { personaType: 'npc' }, emotions: { anger: 0.1, joy: 1 }, config: { verbose: true } },
    });
    expect(changed.body).toEqual({
      persona: { name: 'Old Smith', description: 'retired', personaType: 'npc' },
      emotions: { anger: 0.1, joy: 1 },
      config: { verbose: true },
    });

    expect((await t.api('DELETE', `/api/admin/data/npcs/${id}`, { token: admin.accessToken })).status).toBe(
      204,
    );
    expect((await t.api('GET', `/api/admin/data/npcs/${id}`, { token: admin.accessToken })).status).toBe(404);
  });

  it('reads each of many characters read at once as itself (the profile reads are batched)', async () => {
    const chars = t.deps.services.characters;
    const npcs = await Promise.all(
      ['Ada', 'Bo', 'Cy', 'Di'].map((name, i) =>
        chars.createNpc({
          name,
          description: `npc ${name}`,
          ...(i % 2 ? {} : { personaType: `type-${i}` }),
        }),
      ),
    );
    const [read, subjects] = await Promise.all([
      Promise.all([...npcs, ...npcs].map((n) => chars.getNpc(n.id))),
      Promise.all([...npcs.map((n) => chars.routingSubject(n.id)), chars.routingSubject(player.id)]),
    ]);
    expect(read.map((n) => [n.name, n.description, n.personaType])).toEqual(
      [...npcs, ...npcs].map((n) => [n.name, `npc ${n.name}`, n.personaType]),
    );
    expect(subjects.map((s) => s.personaType)).toEqual(['type-0', null, 'type-2', null, null]);
    for (const n of npcs) await chars.deleteNpc(n.id);
  });

  it('rejects bad input, non-characters, non-admins and the unauthenticated', async () => {
    expect(
      (
        await t.api('POST', '/api/admin/data/npcs', {
          token: admin.accessToken,
          body: { description: 'no name' },
        })
      ).status,
    ).toBe(400);
    const npc = await t.deps.services.characters.createNpc({ name: 'Guard', description: '' });
    expect(
      (
        await t.api('PUT', `/api/admin/data/npcs/${npc.id}/state`, {
          token: admin.accessToken,
          body: { emotions: { joy: 2 } },
        })
      ).status,
    ).toBe(400);
    // A player is a user but not a character.
    expect(
      (await t.api('GET', `/api/admin/data/npcs/${player.id}`, { token: admin.accessToken })).status,
    ).toBe(404);
    expect(
      (await t.api('GET', `/api/admin/data/npcs/${player.id}/state`, { token: admin.accessToken })).status,
    ).toBe(404);
    expect((await t.api('GET', '/api/admin/data/npcs', { token: player.accessToken })).status).toBe(403);
    expect(
      (await t.api('POST', '/api/admin/data/npcs', { token: player.accessToken, body: { name: 'X' } }))
        .status,
    ).toBe(403);
    expect(
      (await t.api('PUT', `/api/admin/data/npcs/${npc.id}/state`, { token: player.accessToken, body: {} }))
        .status,
    ).toBe(403);
    expect((await t.api('GET', '/api/admin/data/npcs')).status).toBe(401);
  });
});

describe('allNpcs', () => {
  it('reads every NPC, page after page, each with its name and description', async () => {
    const chars = t.deps.services.characters;
    for (const name of ['Page A', 'Page B', 'Page C'])
      await chars.createNpc({ name, description: `${name} desc`, metadata: {} });
    const { npcs, total } = await chars.listNpcs({ limit: 1000, offset: 0 });
    expect(npcs).toHaveLength(total);
    // Pages of two: the last page is short or empty, whatever the number of NPCs.
    const all = await chars.allNpcs(2);
    expect(all).toEqual(npcs);
    expect(all.find((n) => n.name === 'Page B')).toMatchObject({ description: 'Page B desc' });
  });
});

describe('relationships', () => {
  it('sets flags and affinity per player and character', async () => {
    const npc = await t.deps.services.characters.createNpc({ name: 'Bard', description: '' });
    const first = await t.api('PUT', '/api/admin/data/relationships', {
      token: admin.accessToken,
      body: { userId: player.id, npcUserId: npc.id, flags: { met: true } },
    });
    expect(first.body).toMatchObject({
      userId: player.id,
      npcUserId: npc.id,
      npcName: 'Bard',
      flags: { met: true },
      affinity: 0,
    });
    const second = await t.api('PUT', '/api/admin/data/relationships', {
      token: admin.accessToken,
      body: { userId: player.id, npcUserId: npc.id, affinity: -0.5 },
    });
    expect(second.body).toMatchObject({ flags: { met: true }, affinity: -0.5 });
    expect(await t.deps.services.characters.relationships(other.id)).toEqual([]);
    expect(
      (
        await t.api('PUT', '/api/admin/data/relationships', {
          token: admin.accessToken,
          body: { userId: player.id, npcUserId: npc.id, affinity: 2 },
        })
      ).status,
    ).toBe(400);
    const notNpc = await t.api('PUT', '/api/admin/data/relationships', {
      token: admin.accessToken,
      body: { userId: player.id, npcUserId: other.id },
    });
    expect(notNpc.body).toMatchObject({ status: 400, errors: [{ path: 'npcUserId' }] });
    expect(
      (
        await t.api('PUT', '/api/admin/data/relationships', {
          token: player.accessToken,
          body: { userId: player.id, npcUserId: npc.id },
        })
      ).status,
    ).toBe(403);
  });
});

describe('quests', () => {
  it('admin CRUD, player progress, and GET /api/quests shows only the caller\u2019s', async () => {
    const q = await t.api('POST', '/api/admin/data/quests', {
      token: admin.accessToken,
      body: { title: 'Slay', description: 'the dragon', metadata: { xp: 10 } },
    });
    expect(q.status).toBe(201);
    expect(q.body).toMatchObject({ title: 'Slay', description: 'the dragon', metadata: { xp: 10 } });
    const id = q.body.id;
    expect(
      (await t.api('GET', `/api/admin/data/quests/${id}`, { token: admin.accessToken })).body.title,
    ).toBe('Slay');
    expect(
      (await t.api('GET', '/api/admin/data/quests', { token: admin.accessToken })).body.total,
    ).toBeGreaterThanOrEqual(1);
    expect(
      (
        await t.api('PUT', `/api/admin/data/quests/${id}`, {
          token: admin.accessToken,
          body: { title: 'Slay!', description: '' },
        })
      ).body.title,
    ).toBe('Slay!');

    const progress = await t.api('PUT', `/api/admin/data/quests/${id}/players/${player.id}`, {
      token: admin.accessToken,
      body: { progress: 0.4 },
    });
    expect(progress.body).toMatchObject({ questId: id, title: 'Slay!', status: 'active', progress: 0.4 });
    const done = await t.api('PUT', `/api/admin/data/quests/${id}/players/${player.id}`, {
      token: admin.accessToken,
      body: { status: 'completed', progress: 1 },
    });
    expect(done.body).toMatchObject({ status: 'completed', progress: 1 });
    expect(
      (
        await t.api('PUT', `/api/admin/data/quests/${id}/players/${player.id}`, {
          token: admin.accessToken,
          body: { status: 'lost' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await t.api('PUT', `/api/admin/data/quests/999999/players/${player.id}`, {
          token: admin.accessToken,
          body: {},
        })
      ).status,
    ).toBe(404);

    const mine = await t.api('GET', '/api/quests', { token: player.accessToken });
    expect(mine.body.quests).toMatchObject([{ questId: id, status: 'completed', progress: 1 }]);
    expect((await t.api('GET', '/api/quests', { token: other.accessToken })).body).toEqual({ quests: [] });
    expect((await t.api('GET', '/api/quests')).status).toBe(401);
    // An admin reads a player's quests as the player does; a player may not read another's.
    const theirs = await t.api('GET', `/api/admin/data/players/${player.id}/quests`, {
      token: admin.accessToken,
    });
    expect(theirs.body).toEqual(mine.body);
    expect(
      (await t.api('GET', `/api/admin/data/players/${player.id}/quests`, { token: other.accessToken }))
        .status,
    ).toBe(403);
    expect(
      (await t.api('GET', '/api/admin/data/players/x/quests', { token: admin.accessToken })).status,
    ).toBe(400);
    expect(
      (await t.api('POST', '/api/admin/data/quests', { token: player.accessToken, body: { title: 'x' } }))
        .status,
    ).toBe(403);
    expect(
      (await t.api('POST', '/api/admin/data/quests', { token: admin.accessToken, body: { title: '' } }))
        .status,
    ).toBe(400);

    expect((await t.api('DELETE', `/api/admin/data/quests/${id}`, { token: admin.accessToken })).status).toBe(
      204,
    );
    expect((await t.api('DELETE', `/api/admin/data/quests/${id}`, { token: admin.accessToken })).status).toBe(
      404,
    );
    expect((await t.api('GET', '/api/quests', { token: player.accessToken })).body).toEqual({ quests: [] });
  });
});
