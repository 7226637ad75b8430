// inventoryUpdate: a chat turn's tool that changes the player's items or coins reaches the
// player's sockets (all of them, and no one else's) with the inventory and the change; the turn's
// assistantResponse carries the tool results; the director event is linked to the player's own
// instance when one exists, so its observer sees it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSocket, createTestApp, createUser, type TestApp } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { inventoryUpdateEvent } from './inventory.updates.js';

let fake: FakeModelServer;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

describe('inventoryUpdate', () => {
  it('tells every socket of the player after a tool turn, with the tool results on the reply', async () => {
    const player = await createUser(t, 'public', { name: 'Ada' });
    const other = await createUser(t, 'public');
    const oil = await t.deps.services.inventory.createItem({
      name: 'Lantern oil',
      description: '',
      type: 'consumable',
    });
    await t.deps.services.inventory.modifyCurrency(player.id, 10);
    const instance = await t.deps.services.instances.create(
      { name: "Ada's shard", level: 5, source: 'game_client', userId: player.id },
      player.id,
    );
    const chat = await connectSocket(t.url, { auth: { token: player.accessToken } });
    const second = await connectSocket(t.url, { auth: { token: player.accessToken } });
    const stranger = await connectSocket(t.url, { auth: { token: other.accessToken } });

    fake.replyChat({
      toolCalls: [
        { name: 'modifyInventory', arguments: { itemId: oil.id, quantity: 2 } },
        { name: 'modifyCurrency', arguments: { amount: 5 } },
      ],
    });
    fake.replyChat({ text: 'Two flasks of oil and five coins for you.' });
    const { ack, events } = await chat.send('chatMessage', { message: 'Help me light the lamp' });
    expect(ack.ok).toBe(true);

    const response = events.find((e) => e.name === 'assistantResponse')!.payload;
    expect(response.toolResults).toEqual([
      { name: 'modifyInventory', result: expect.objectContaining({ ok: true, itemId: oil.id, quantity: 2 }) },
      { name: 'modifyCurrency', result: expect.objectContaining({ ok: true, energy_coins: 15 }) },
    ]);

    for (const s of [chat, second]) {
      const items = await s.next('inventoryUpdate', { match: (p) => p.change.kind === 'item' });
      const coins = await s.next('inventoryUpdate', { match: (p) => p.change.kind === 'currency' });
      expect(inventoryUpdateEvent.safeParse(items.payload).success).toBe(true);
      expect(items.payload.change).toMatchObject({ itemId: oil.id, delta: 2, before: 0, after: 2 });
      expect(items.payload.items).toEqual([expect.objectContaining({ item_id: oil.id, quantity: 2 })]);
      expect(coins.payload).toMatchObject({
        energyCoins: 15,
        change: { kind: 'currency', itemId: null, delta: 5, before: 10, after: 15 },
      });
    }
    expect(stranger.events.some((e) => e.name === 'inventoryUpdate')).toBe(false);

    // Both director events are the player's instance's, under its observer.
    const directorEvents = await t.deps.db
      .selectFrom('timeline_events')
      .select(['event_type', 'instance_id'])
      .where('user_id', '=', player.id)
      .where('source', '=', 'director')
      .orderBy('id')
      .execute();
    expect(directorEvents).toEqual([
      { event_type: 'inventory_changed', instance_id: instance.id },
      { event_type: 'currency_changed', instance_id: instance.id },
    ]);
    for (const s of [chat, second, stranger]) s.close();
  });

  it('a player without an instance: the director event has none', async () => {
    const player = await createUser(t);
    const chat = await connectSocket(t.url, { auth: { token: player.accessToken } });
    fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: { amount: 3 } }] });
    fake.replyChat({ text: 'Three coins.' });
    await chat.send('chatMessage', { message: 'A tip?' });
    expect((await chat.next('inventoryUpdate')).payload.energyCoins).toBe(3);
    const event = await t.deps.db
      .selectFrom('timeline_events')
      .select('instance_id')
      .where('user_id', '=', player.id)
      .where('event_type', '=', 'currency_changed')
      .executeTakeFirstOrThrow();
    expect(event.instance_id).toBeNull();
    chat.close();
  });
});
