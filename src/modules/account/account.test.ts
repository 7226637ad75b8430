// An account's export holds every kind of its rows; its erasure (by itself, with its password or
// a recent session, or by an administrator) ends its tokens and takes its memories, messages and
// inventory, while the ledger keeps its rows and still sums.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';

let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  admin = await createUser(t, 'cso');
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** A player with a row of every kind: a memory, a conversation, items, coins, timeline events. */
async function playerWithData(user: TestUser) {
  const s = t.deps.services;
  await t.api('POST', '/api/assistant/memory', {
    token: user.accessToken,
    body: { content: 'My horse is called Blaze.', source: 'shared' },
  });
  fake.replyChat({ text: 'Blaze is a fine name.' });
  const turn = await t.api('POST', '/api/chat/turns', {
    token: user.accessToken,
    body: { message: 'My horse is called Blaze.' },
  });
  expect(turn.status).toBe(200);
  const sword = await s.inventory.createItem({ name: 'Sword', description: '', type: 'weapon' });
  await s.inventory.modifyCurrency(user.id, 40);
  await s.inventory.modifyCurrency(user.id, -15);
  await s.inventory.modifyInventory(user.id, sword.id, 2);
  const event = await t.api('POST', '/api/sync/ingest-event', {
    token: admin.accessToken,
    body: { userId: user.id, eventType: 'arrived_at_harbour', eventText: 'Reached the harbour' },
  });
  expect(event.status).toBe(201);
  return { conversationId: turn.body.conversationId as number, swordId: sword.id };
}

const count = async (
  table: 'memories' | 'conversations' | 'user_inventory' | 'refresh_tokens',
  userId: number,
) =>
  Number(
    (
      await t.deps.db
        .selectFrom(table)
        .select((e) => e.fn.countAll().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
    ).n,
  );

const ledgerSums = async (userId: number) => {
  const rows = await t.deps.db
    .selectFrom('economy_ledger')
    .select(['kind', 'delta', 'balance_after'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  const coins = rows.filter((r) => r.kind === 'currency');
  return {
    rows: rows.length,
    coinsSum: coins.reduce((n, r) => n + Number(r.delta), 0),
    coinsLast: Number(coins.at(-1)?.balance_after ?? 0),
  };
};

describe('GET /api/user/export', () => {
  it('holds every kind of row of the caller’s, and none of anyone else’s', async () => {
    const ada = await createUser(t, 'public', { name: 'Ada' });
    const other = await createUser(t, 'public');
    const { conversationId, swordId } = await playerWithData(ada);
    await playerWithData(other);
    const res = await t.api('GET', '/api/user/export', { token: ada.accessToken });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain(`account-${ada.id}.json`);
    const doc = res.body;
    expect(doc.profile).toMatchObject({ id: ada.id, name: 'Ada', energy_coins: 25 });
    expect(doc.memories.map((m: { content: string }) => m.content)).toContain('My horse is called Blaze.');
    expect(doc.memories.every((m: { userId: number }) => m.userId === ada.id)).toBe(true);
    expect(doc.conversations).toEqual([
      expect.objectContaining({
        id: conversationId,
        messages: [
          expect.objectContaining({ role: 'user', text: 'My horse is called Blaze.' }),
          expect.objectContaining({ role: 'assistant', text: 'Blaze is a fine name.' }),
        ],
      }),
    ]);
    expect(doc.inventory).toEqual({
      energy_coins: 25,
      items: [expect.objectContaining({ item_id: swordId, quantity: 2 })],
    });
    expect(doc.ledger).toHaveLength(3);
    expect(doc.timeline.length).toBeGreaterThan(0);
    expect(doc.timeline.every((e: { userId: number }) => e.userId === ada.id)).toBe(true);
    expect((await t.api('GET', '/api/user/export')).status).toBe(401);
  });
});

describe('erasing an account', () => {
  it('with its password: tokens, memories, messages and inventory gone; the ledger still sums', async () => {
    const ada = await createUser(t, 'public');
    await playerWithData(ada);
    const before = await ledgerSums(ada.id);
    expect(before).toMatchObject({ rows: 3, coinsSum: 25, coinsLast: 25 });

    const wrong = await t.api('DELETE', '/api/user/account', {
      token: ada.accessToken,
      body: { password: 'nope nope' },
    });
    expect(wrong.status).toBe(401);
    const none = await t.api('DELETE', '/api/user/account', { token: ada.accessToken });
    expect(none.status).toBe(401);
    expect((await t.api('GET', '/api/user/profile', { token: ada.accessToken })).status).toBe(200);

    const erased = await t.api('DELETE', '/api/user/account', {
      token: ada.accessToken,
      body: { password: ada.password },
    });
    expect(erased.status).toBe(204);
    expect((await t.api('GET', '/api/user/profile', { token: ada.accessToken })).status).toBe(401);
    const refreshed = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: ada.refreshToken } });
    expect(refreshed.status).toBe(401);
    for (const table of ['memories', 'conversations', 'user_inventory', 'refresh_tokens'] as const)
      expect(await count(table, ada.id)).toBe(0);
    const messages = await t.deps.db
      .selectFrom('chat_messages')
      .select('id')
      .where('user_id', '=', ada.id)
      .execute();
    expect(messages).toEqual([]);
    expect(await ledgerSums(ada.id)).toEqual(before);
  });

  it('a password-less player erases its account from a recent session', async () => {
    const key = (await t.deps.services.auth.createApiKey('game', ['players:write'], null)).key;
    const session = await t.api('POST', '/api/sync/players', {
      apiKey: key,
      body: { externalId: 'steam:erase-1' },
    });
    const token = session.body.accessToken as string;
    fake.replyChat({ text: 'Hello.' });
    await t.api('POST', '/api/chat/turns', { token, body: { message: 'Hello' } });
    const erased = await t.api('DELETE', '/api/user/account', { token });
    expect(erased.body).toBe(null);
    expect(erased.status).toBe(204);
    expect((await t.api('GET', '/api/user/profile', { token })).status).toBe(401);
    expect((await t.api('GET', '/api/sync/players/steam:erase-1', { apiKey: key })).status).toBe(404);
    // The same game id later is a new player.
    const again = await t.api('POST', '/api/sync/players', {
      apiKey: key,
      body: { externalId: 'steam:erase-1' },
    });
    expect(again.status).toBe(201);
    expect(again.body.user.id).not.toBe(session.body.user.id);
  });

  it('by an administrator; never a character, nor the admin’s own; players may not', async () => {
    const bo = await createUser(t, 'public');
    await playerWithData(bo);
    const before = await ledgerSums(bo.id);
    const player = await createUser(t, 'public');
    expect((await t.api('DELETE', `/api/admin/users/${bo.id}`, { token: player.accessToken })).status).toBe(
      403,
    );
    expect((await t.api('DELETE', `/api/admin/users/${bo.id}`, { token: admin.accessToken })).status).toBe(
      204,
    );
    expect((await t.api('GET', '/api/user/profile', { token: bo.accessToken })).status).toBe(401);
    expect(await count('memories', bo.id)).toBe(0);
    expect(await ledgerSums(bo.id)).toEqual(before);
    expect((await t.api('DELETE', `/api/admin/users/${bo.id}`, { token: admin.accessToken })).status).toBe(
      404,
    );
    const npc = await t.deps.services.characters.createNpc({ name: 'Mira', description: 'a smith' });
    expect((await t.api('DELETE', `/api/admin/users/${npc.id}`, { token: admin.accessToken })).status).toBe(
      409,
    );
    expect((await t.api('DELETE', `/api/admin/users/${admin.id}`, { token: admin.accessToken })).status).toBe(
      409,
    );
  });
});
