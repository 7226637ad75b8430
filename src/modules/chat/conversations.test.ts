// Conversations, history and choices over HTTP: validation, ownership (another user's
// conversation is "not found"), pagination.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let npc: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  alice = await createUser(t);
  bob = await createUser(t);
  npc = await createUser(t, 'npc', { name: 'Mira' });
});
afterAll(() => t.close());

describe('/api/conversations', () => {
  it('creates, lists, gets and deletes own conversations', async () => {
    const created = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'Quest talk', npcUserIds: [npc.id] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Quest talk', npcUserIds: [npc.id] });
    const list = await t.api('GET', '/api/conversations', { token: alice.accessToken });
    expect(list.body.conversations.map((c: { id: number }) => c.id)).toContain(created.body.id);
    expect(
      (await t.api('GET', `/api/conversations/${created.body.id}`, { token: alice.accessToken })).body.id,
    ).toBe(created.body.id);
    expect(
      (await t.api('DELETE', `/api/conversations/${created.body.id}`, { token: alice.accessToken })).status,
    ).toBe(204);
    expect(
      (await t.api('GET', `/api/conversations/${created.body.id}`, { token: alice.accessToken })).status,
    ).toBe(404);
  });

  it('refuses NPC ids that are not NPCs, and bad input, storing nothing', async () => {
    const before = (await t.api('GET', '/api/conversations', { token: alice.accessToken })).body.total;
    const notNpc = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { npcUserIds: [bob.id] },
    });
    expect(notNpc.status).toBe(400);
    expect(notNpc.body.code).toBe('validation_failed');
    expect(
      (await t.api('POST', '/api/conversations', { token: alice.accessToken, body: { title: 5 } })).status,
    ).toBe(400);
    expect((await t.api('GET', '/api/conversations/abc', { token: alice.accessToken })).status).toBe(400);
    expect((await t.api('GET', '/api/conversations?limit=0', { token: alice.accessToken })).status).toBe(400);
    expect((await t.api('GET', '/api/conversations', { token: alice.accessToken })).body.total).toBe(before);
  });

  it("never shows or deletes another user's conversation", async () => {
    const mine = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'private' },
    });
    expect(
      (await t.api('GET', `/api/conversations/${mine.body.id}`, { token: bob.accessToken })).status,
    ).toBe(404);
    expect(
      (await t.api('DELETE', `/api/conversations/${mine.body.id}`, { token: bob.accessToken })).status,
    ).toBe(404);
    expect(
      (
        await t.api('GET', `/api/assistant/history?conversationId=${mine.body.id}`, {
          token: bob.accessToken,
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await t.api('GET', `/api/assistant/choices?conversationId=${mine.body.id}`, {
          token: bob.accessToken,
        })
      ).status,
    ).toBe(404);
    const bobs = await t.api('GET', '/api/conversations', { token: bob.accessToken });
    expect(bobs.body.conversations.map((c: { id: number }) => c.id)).not.toContain(mine.body.id);
    expect(
      (await t.api('GET', `/api/conversations/${mine.body.id}`, { token: alice.accessToken })).status,
    ).toBe(200);
  });

  it('resolves many conversations at once, each for its own user (the reads are batched)', async () => {
    const users = await Promise.all(Array.from({ length: 4 }, () => createUser(t)));
    const convs = t.deps.services.conversations;
    // Defaults created on first use, several at once, exactly one each.
    const first = await Promise.all([...users, ...users].map((u) => convs.resolve(u.id, undefined)));
    const again = await Promise.all(users.map((u) => convs.resolve(u.id, undefined)));
    for (const [i, u] of users.entries()) {
      expect(first[i]).toMatchObject({ user_id: u.id, is_default: true });
      expect(first[i + users.length]!.id).toBe(first[i]!.id);
      expect(again[i]!.id).toBe(first[i]!.id);
    }
    const named = await Promise.all(users.map((u) => convs.create(u.id, { title: `t${u.id}` })));
    const byId = await Promise.all(users.map((u, i) => convs.resolve(u.id, named[i]!.id)));
    expect(byId.map((c) => c.title)).toEqual(users.map((u) => `t${u.id}`));
    // Another user's conversation read in the same batch is still not found.
    const mixed = await Promise.allSettled([
      convs.resolve(users[0]!.id, named[0]!.id),
      convs.resolve(users[1]!.id, named[0]!.id),
    ]);
    expect(mixed[0]).toMatchObject({ status: 'fulfilled' });
    expect(mixed[1]).toMatchObject({ status: 'rejected', reason: { code: 'not_found' } });
  });

  it('requires an access token', async () => {
    expect((await t.api('GET', '/api/conversations')).status).toBe(401);
    expect((await t.api('POST', '/api/conversations', { body: {} })).status).toBe(401);
    expect((await t.api('GET', '/api/assistant/history')).status).toBe(401);
    expect((await t.api('GET', '/api/assistant/choices')).status).toBe(401);
  });
});

describe('/api/assistant/history and /api/assistant/choices', () => {
  it('pages messages oldest first and returns the last response’s choices', async () => {
    const c = await t.deps.services.conversations.create(alice.id, { title: 'paging' });
    const { insertMessage } = await import('./conversations.repository.js');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const m = await insertMessage(t.deps.db, {
        conversationId: c.id,
        userId: alice.id,
        role: i % 2 ? 'assistant' : 'user',
        text: `m${i}`,
        metadata: i === 3 ? { choices: [{ id: 'a', text: 'Tell me more' }] } : {},
      });
      ids.push(m.id);
    }
    const last2 = await t.api('GET', `/api/assistant/history?conversationId=${c.id}&limit=2`, {
      token: alice.accessToken,
    });
    expect(last2.body.messages.map((m: { text: string }) => m.text)).toEqual(['m3', 'm4']);
    const older = await t.api(
      'GET',
      `/api/assistant/history?conversationId=${c.id}&limit=2&before=${ids[3]}`,
      { token: alice.accessToken },
    );
    expect(older.body.messages.map((m: { text: string }) => m.text)).toEqual(['m1', 'm2']);
    expect(older.body.messages[0]).toMatchObject({
      conversationId: c.id,
      role: 'assistant',
      npcUserId: null,
    });
    const choices = await t.api('GET', `/api/assistant/choices?conversationId=${c.id}`, {
      token: alice.accessToken,
    });
    expect(choices.body).toEqual({ choices: [{ id: 'a', text: 'Tell me more' }] });
    expect(
      (await t.api('GET', `/api/assistant/history?limit=201`, { token: alice.accessToken })).status,
    ).toBe(400);
  });

  it('uses the default conversation when none is named (empty at first)', async () => {
    const fresh = await createUser(t);
    const h = await t.api('GET', '/api/assistant/history', { token: fresh.accessToken });
    expect(h.status).toBe(200);
    expect(h.body.messages).toEqual([]);
    expect((await t.api('GET', '/api/assistant/choices', { token: fresh.accessToken })).body).toEqual({
      choices: [],
    });
  });
});

describe('/api/tools', () => {
  it('lists the chat tools with their argument schemas, for signed-in callers only', async () => {
    const res = await t.api('GET', '/api/tools', { token: alice.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.tools.map((x: { name: string }) => x.name)).toEqual([
      'modifyInventory',
      'modifyCurrency',
      'lookupMemory',
    ]);
    expect(res.body.tools[1].parameters).toMatchObject({
      type: 'object',
      properties: { amount: { type: 'integer' } },
    });
    expect((await t.api('GET', '/api/tools')).status).toBe(401);
  });
});
