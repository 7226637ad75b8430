// The records each node caches for chat turns (RECORD_CACHE_MS; db/noticed-cache.ts): characters'
// profiles, routing families' protocols and conversations. A change is read at once on the node that made it, by
// every path that makes one, and on PostgreSQL another node hears of it through NOTIFY, though it
// trusts its cache for an hour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, eventually, isPostgres, type TestApp, type TestUser } from './harness.js';

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
beforeAll(async () => {
  t = await createTestApp({ RECORD_CACHE_MS: '3600000' });
  admin = await createUser(t, 'cso');
  dev = await createUser(t, 'developer');
});
afterAll(() => t.close());

const npc = (app: TestApp, id: number, path = '') =>
  app.api('GET', `/api/admin/data/npcs/${id}${path}`, { token: admin.accessToken });
/** The system prompt a turn of `dev` would get, through the node `app`. */
const systemPrompt = async (app: TestApp) =>
  (
    await app.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: dev.id, message: 'hello' },
    })
  ).body.system as string;

async function createNpc(app: TestApp, name: string): Promise<number> {
  const res = await app.api('POST', '/api/admin/data/npcs', {
    token: admin.accessToken,
    body: { name, description: 'forges swords', personaType: 'merchant' },
  });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

/** A new version of the TECH family (what `dev` is routed to) with one more rule. */
async function publishTech(app: TestApp, version: number, rule: string) {
  const v1 = (await app.api('GET', '/api/protocol/protocols/tech_protocol_v1', { token: admin.accessToken }))
    .body;
  const res = await app.api('POST', '/api/protocol/protocols', {
    token: admin.accessToken,
    body: { ...definitionOf(v1), id: `tech_protocol_v${version}`, rules: [...v1.rules, rule] },
  });
  expect(res.status).toBe(201);
}

/** A protocol's view as a definition to write back: its own fields, without the record's. */
function definitionOf(view: Record<string, unknown>) {
  const record = ['id', 'category', 'version', 'builtin', 'immutable', 'createdAt', 'updatedAt'];
  return Object.fromEntries(Object.entries(view).filter(([k, v]) => v !== null && !record.includes(k)));
}

describe('on the node that made the change', () => {
  it("reads a character's profile afresh after each write to it, and none after its user is deleted", async () => {
    const id = await createNpc(t, 'Smith');
    expect((await npc(t, id)).body).toMatchObject({ description: 'forges swords' });
    await t.api('PUT', `/api/admin/data/npcs/${id}/state`, {
      token: admin.accessToken,
      body: { emotions: { joy: 0.7 }, persona: { description: 'sells swords' } },
    });
    expect((await npc(t, id, '/state')).body).toMatchObject({
      emotions: { joy: 0.7 },
      persona: { description: 'sells swords' },
    });
    expect((await npc(t, id)).body).toMatchObject({ description: 'sells swords' });
    await t.api('PUT', `/api/admin/data/npcs/${id}`, {
      token: admin.accessToken,
      body: { name: 'Old Smith', description: 'retired' },
    });
    expect((await npc(t, id)).body).toMatchObject({ name: 'Old Smith', description: 'retired' });
    // Deleted through the users module, not the characters': the account's notice drops it.
    await t.deps.services.users.remove(id);
    expect((await npc(t, id)).status).toBe(404);
  });

  it("routes to a family's new version, and composes with a base changed under it", async () => {
    expect(await systemPrompt(t)).not.toContain('Cite file paths.');
    await publishTech(t, 2, 'Cite file paths.');
    expect(await systemPrompt(t)).toContain('Cite file paths.');
    const base = (
      await t.api('GET', '/api/protocol/protocols/assistant_base_v1', { token: admin.accessToken })
    ).body;
    expect(base.kind).toBe('string');
    const put = await t.api('PUT', '/api/protocol/protocols/assistant_base_v1', {
      token: admin.accessToken,
      body: { ...definitionOf(base), template: `${base.template}\nMind the lighthouse.` },
    });
    expect(put.status).toBe(200);
    expect(await systemPrompt(t)).toContain('Mind the lighthouse.');
  });
});

/** The user's default conversation's id, as `app` resolves it (made on first use). */
const defaultConversation = async (app: TestApp, user: TestUser) =>
  (await app.deps.services.conversations.resolve(user.id, undefined)).id;
const conversation = (app: TestApp, user: TestUser, id: number) =>
  app.api('GET', `/api/conversations/${id}`, { token: user.accessToken });

describe('conversations', () => {
  it('forgets a deleted conversation at once, and a deleted default is made anew', async () => {
    const player = await createUser(t, 'public');
    const first = await defaultConversation(t, player);
    expect(await defaultConversation(t, player)).toBe(first);
    expect((await conversation(t, player, first)).status).toBe(200);
    const del = await t.api('DELETE', `/api/conversations/${first}`, { token: player.accessToken });
    expect(del.status).toBe(204);
    expect((await conversation(t, player, first)).status).toBe(404);
    const second = await defaultConversation(t, player);
    expect(second).not.toBe(first);
    expect((await conversation(t, player, second)).body).toMatchObject({ id: second });
  });
});

// PostgreSQL only: two nodes need a database both can open (the embedded one serves one process).
describe.runIf(isPostgres())('on another node of the same PostgreSQL', () => {
  let b: TestApp;
  beforeAll(async () => {
    b = await createTestApp({ RECORD_CACHE_MS: '3600000' }, { sameDatabaseAs: t });
  });
  afterAll(() => b?.close());

  it("hears of a character's change and of a protocol's, though it had cached both", async () => {
    const id = await createNpc(t, 'Mara');
    expect((await npc(b, id)).body).toMatchObject({ description: 'forges swords' });
    const before = await systemPrompt(b);
    await t.api('PUT', `/api/admin/data/npcs/${id}/state`, {
      token: admin.accessToken,
      body: { persona: { description: 'mends nets' } },
    });
    await eventually(async () =>
      expect((await npc(b, id)).body).toMatchObject({ description: 'mends nets' }),
    );
    await publishTech(t, 3, 'Answer in haiku.');
    expect(before).not.toContain('Answer in haiku.');
    await eventually(async () => expect(await systemPrompt(b)).toContain('Answer in haiku.'));
    await t.deps.services.users.remove(id);
    await eventually(async () => expect((await npc(b, id)).status).toBe(404));
  });

  it('hears of a deleted conversation, though it had cached it as the default', async () => {
    const player = await createUser(t, 'public');
    const first = await defaultConversation(b, player);
    expect((await conversation(b, player, first)).status).toBe(200);
    await t.api('DELETE', `/api/conversations/${first}`, { token: player.accessToken });
    await eventually(async () => expect((await conversation(b, player, first)).status).toBe(404));
    await eventually(async () => expect(await defaultConversation(b, player)).not.toBe(first));
  });
});
