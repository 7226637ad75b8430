// The turn's context, whole, end to end: what the quests, relationships, inventory and the routed
// protocol's reach put into the system prompt the (fake) model server receives.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import type { IdentityKind } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;
let assistantId: number;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  admin = await createUser(t, 'cso', { name: 'Operator' });
  assistantId = await t.deps.services.characters.assistantUserId();
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const as = (user: TestUser) => ({ token: user.accessToken });

/** One turn of `user`; the system prompt the model received. */
async function turn(user: TestUser, message: string, extra: Record<string, unknown> = {}) {
  fake.reset();
  const c = await chatClient(t, user);
  const { ack } = await c.send('chatMessage', { message, preferences: { stream: false }, ...extra });
  c.socket.close();
  expect(ack.ok).toBe(true);
  return String(fake.chatRequests()[0]!.body.messages[0].content);
}

describe('the turn context', () => {
  it('a quest moved through sync, a relationship set by an admin and an item given each reach the next prompt', async () => {
    const player = await createUser(t, 'public', { name: 'Ada' });
    const before = await turn(player, 'What should I do next?');
    expect(before).toContain('## Quests\n(none)');
    expect(before).toContain('(no items)\nEnergy coins: 0');
    expect(before).not.toContain('and Ada: affinity');

    const quest = await t.api('POST', '/api/admin/data/quests', {
      ...as(admin),
      body: { title: 'Relight the lighthouse', description: 'Bring oil' },
    });
    const ingested = await t.api('POST', '/api/sync/ingest-event', {
      ...as(admin),
      body: {
        userId: player.id,
        eventType: 'quest_progressed',
        eventText: 'Ada brought the oil',
        metadata: { questId: quest.body.id, questProgress: 0.5 },
      },
    });
    expect(ingested.status).toBe(201);
    await t.api('PUT', '/api/admin/data/relationships', {
      ...as(admin),
      body: { userId: player.id, npcUserId: assistantId, flags: { trusted: true }, affinity: 0.6 },
    });
    const lamp = await t.api('POST', '/api/admin/data/items', {
      ...as(admin),
      body: { name: 'Oil lamp', type: 'tool' },
    });
    await t.api('POST', '/api/inventory/modify', {
      ...as(admin),
      body: { userId: player.id, itemId: lamp.body.id, quantity: 2 },
    });

    const after = await turn(player, 'What should I do next?');
    expect(after).toContain('## Quests\n- Relight the lighthouse: active, 50% done');
    expect(after).toMatch(/and Ada: affinity 0\.6; flags: trusted/);
    expect(after).toContain('Oil lamp x 2');

    // Completed through sync: the quest reads as done.
    await t.api('POST', '/api/sync/ingest-event', {
      ...as(admin),
      body: { userId: player.id, eventType: 'quest_completed', metadata: { questId: quest.body.id } },
    });
    expect(await turn(player, 'Anything left?')).toContain('- Relight the lighthouse: completed');
  });

  it('records the client and the channel the turn comes from', async () => {
    const player = await createUser(t);
    expect(await turn(player, 'Hello', { channelId: 'lobby-1' })).toContain(
      '## System knowledge\nThis turn comes from: client web_portal, channel lobby-1.',
    );
    expect(await turn(player, 'Hello')).toContain(
      '## System knowledge\nThis turn comes from: client web_portal.',
    );
    // The client is the session's: a game client's sign-in says so.
    const signIn = await t.api('POST', '/api/auth/token', {
      body: { email: player.email, password: player.password, clientType: 'game_client' },
    });
    expect(signIn.status).toBe(200);
    expect(await turn({ ...player, accessToken: signIn.body.accessToken }, 'Hello')).toContain(
      'This turn comes from: client game_client.',
    );
  });

  it('refuses a quest event for an unknown quest and stores nothing', async () => {
    const player = await createUser(t);
    const res = await t.api('POST', '/api/sync/ingest-event', {
      ...as(admin),
      body: { userId: player.id, eventType: 'quest_started', metadata: { questId: 999_999 } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed' });
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'metadata.questId' })]);
    const events = await t.deps.services.timeline.list({ userId: player.id, limit: 10 });
    expect(events).toEqual([]);
  });

  describe('what each protocol may reach', () => {
    /** A user of `kind` with a personal memory and a relationship with another character. */
    async function subject(kind: IdentityKind) {
      const user = await createUser(t, kind, { name: `Kit ${kind}` });
      const stored = await t.api('POST', '/api/assistant/memory', {
        ...as(user),
        body: { content: 'My horse is called Clover', source: 'shared' },
      });
      expect(stored.status).toBe(201);
      const other = await t.deps.services.characters.createNpc({
        name: `Oren ${kind}`,
        description: 'a ferryman',
      });
      await t.deps.services.characters.putRelationship({
        userId: user.id,
        npcUserId: other.id,
        affinity: -0.3,
      });
      return { user, other };
    }

    it.each<
      [IdentityKind, string, { personal: boolean; others: boolean; figures: boolean; observers: boolean }]
    >([
      ['public', 'PUBLIC', { personal: true, others: false, figures: false, observers: false }],
      ['core_primary', 'PRIVATE', { personal: true, others: true, figures: false, observers: false }],
      ['developer', 'TECH', { personal: true, others: false, figures: true, observers: false }],
      ['npc', 'NEUTRAL', { personal: false, others: false, figures: false, observers: false }],
      ['cso', 'SYSTEM', { personal: true, others: true, figures: true, observers: true }],
    ])('%s → %s', async (kind, protocol, want) => {
      const { user, other } = await subject(kind);
      await t.api('POST', '/api/sync/ingest-event', {
        ...as(admin),
        body: { userId: user.id, eventType: 'note', eventText: `a note about ${kind}` },
      });
      const system = await turn(user, 'What is my horse called?');
      expect(system).toContain(`Protocol: ${protocol[0]}${protocol.slice(1).toLowerCase()} protocol.`);
      expect(system.includes('My horse is called Clover')).toBe(want.personal);
      expect(system.includes(`${other.name} and Kit ${kind}: affinity -0.3`)).toBe(want.others);
      expect(system.includes('System figures: {"windowHours":24')).toBe(want.figures);
      expect(system.includes(`a note about ${kind}`)).toBe(want.observers);
    });
  });

  it("gives a group's director the same tools, with the assistant as the actor", async () => {
    const player = await createUser(t, 'public', { name: 'Group Player' });
    const mira = await t.deps.services.characters.createNpc({ name: 'Mira G', description: 'a smith' });
    const tomas = await t.deps.services.characters.createNpc({ name: 'Tomas G', description: 'a bard' });
    const conv = await t.api('POST', '/api/conversations', {
      ...as(player),
      body: { title: 'forge', npcUserIds: [mira.id, tomas.id] },
    });
    fake.reset();
    fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: { amount: 15 } }] });
    fake.replyChat({
      text: JSON.stringify({ responses: [{ npcUserId: mira.id, text: 'Take these coins.' }] }),
    });
    const c = await chatClient(t, player);
    const { ack, events } = await c.send('chatMessage', { message: 'Pay me', conversationId: conv.body.id });
    c.socket.close();
    expect(ack.ok).toBe(true);
    expect(events.find((e) => e.name === 'assistantResponse')!.payload.text).toBe('Take these coins.');
    const [first, second] = fake.chatRequests();
    expect(first!.body.tools.map((x: any) => x.function.name)).toContain('modifyCurrency');
    expect(
      second!.body.messages.some(
        (m: any) => m.role === 'tool' && String(m.content).includes('"energy_coins":15'),
      ),
    ).toBe(true);
    const [event] = await t.deps.services.timeline.list({
      userId: player.id,
      eventType: 'currency_changed',
      limit: 5,
    });
    expect(event).toMatchObject({
      eventText: 'Awarded 15 energy coins (balance 15)',
      personaId: assistantId,
    });
  });

  it('shows the whole context in the prompt preview', async () => {
    const player = await createUser(t, 'public', { name: 'Preview Player' });
    const quest = await t.api('POST', '/api/admin/data/quests', {
      ...as(admin),
      body: { title: 'Map the caves' },
    });
    await t.api('PUT', `/api/admin/data/quests/${quest.body.id}/players/${player.id}`, {
      ...as(admin),
      body: { progress: 0.25 },
    });
    const res = await t.api('POST', '/api/admin/prompts/preview', {
      ...as(admin),
      body: { userId: player.id, message: 'Where next?' },
    });
    expect(res.status).toBe(200);
    expect(res.body.system).toContain('- Map the caves: active, 25% done');
    expect(res.body.context).toMatchObject({
      playerQuests: { active: [expect.objectContaining({ title: 'Map the caves', progress: 0.25 })] },
      playerInventory: { items: [], energyCoins: 0 },
      systemWideKnowledge: { protocol: { category: 'PUBLIC', capabilities: { memoryAccess: 'standard' } } },
      dropped: {},
    });
  });
  // Last: it adds a newer NEUTRAL protocol, which routing then prefers for every NPC account.
  it("a limited protocol keeps the player's memories out of lookupMemory too", async () => {
    const npcAccount = await createUser(t, 'npc', { name: 'Pip' });
    await t.api('POST', '/api/assistant/memory', {
      ...as(npcAccount),
      body: { content: 'Pip hid the key under the stone', source: 'shared' },
    });
    // NEUTRAL itself offers no tools; a newer version that offers lookupMemory keeps its reach.
    const created = await t.api('POST', '/api/protocol/protocols', {
      ...as(admin),
      body: {
        id: 'neutral_protocol_v2',
        kind: 'reference',
        base: 'assistant_base_v1',
        name: 'Neutral protocol',
        tools: ['lookupMemory'],
        capabilities: { memoryAccess: 'limited', adminAccess: false, observer: false },
      },
    });
    expect(created.status).toBe(201);
    fake.reset();
    fake.replyChat({ toolCalls: [{ name: 'lookupMemory', arguments: { query: 'key stone' } }] });
    fake.replyChat({ text: 'I do not know.' });
    const c = await chatClient(t, npcAccount);
    await c.send('chatMessage', { message: 'Where is the key?', preferences: { stream: false } });
    c.socket.close();
    const [first, second] = fake.chatRequests();
    expect(String(first!.body.messages[0].content)).not.toContain('Pip hid the key');
    const tool = second!.body.messages.find((m: any) => m.role === 'tool');
    expect(JSON.parse(String(tool.content))).toMatchObject({ ok: true, memories: [] });
  });
});
