// Characters with minds of their own, end to end against a model server that records what it
// receives: a blacksmith (Brom) and an innkeeper (Maela), each with a card and lore. Each direct
// thread carries only its own lines, a scene's history names every speaker, the named character
// answers, each speaker's own lore and what the player told it reach its prompt (and, with
// playerMemory "own", never another's), the prompt opens with the card, and quests come with
// their objectives and step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient, type ChatTestSocket } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;
let alice: TestUser;
let c: ChatTestSocket;
let brom: { id: number };
let maela: { id: number };

const card = (name: string, body: Record<string, unknown>) =>
  t.api('POST', '/api/admin/data/npcs', { token: admin.accessToken, body: { name, ...body } });

/** The last chat request's system prompt and messages. */
function lastRequest() {
  const body = fake.chatRequests().at(-1)!.body;
  const [system, ...messages] = body.messages as { role: string; content: string }[];
  return { system: system!.content, messages, text: JSON.stringify(body.messages) };
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  admin = await createUser(t, 'cso');
  alice = await createUser(t, 'public', { name: 'Alice' });
  const b = await card('Brom', {
    description: 'The blacksmith of Oakvale.',
    personality: 'Gruff, proud of his forge, kind to the young.',
    speakingStyle: 'Short sentences. Smithing words.',
    goals: ['Forge a blade for the guard captain'],
  });
  const m = await card('Maela', {
    description: 'The innkeeper of the Oak Inn.',
    personality: 'Warm and talkative; hears every rumour.',
    speakingStyle: 'Chatty, calls everyone "love".',
  });
  expect(b.status).toBe(201);
  expect(b.body).toMatchObject({
    name: 'Brom',
    personality: 'Gruff, proud of his forge, kind to the young.',
    goals: ['Forge a blade for the guard captain'],
    playerMemory: 'own',
  });
  brom = b.body;
  maela = m.body;
  await t.deps.services.memory.addMemories([
    {
      userId: maela.id,
      source: 'manual_ingestion_text',
      content: 'A room at the Oak Inn costs five silver a night, breakfast included.',
    },
    {
      userId: brom.id,
      source: 'manual_ingestion_text',
      content: 'The forge fire of Oakvale has never gone out.',
    },
  ]);
  c = await chatClient(t, alice);
});
afterAll(async () => {
  c?.socket.close();
  await t.close();
  await fake.close();
});

const direct = (npcUserId: number, message: string) =>
  c.send('directNpcMessage', { npcUserId, message }, 'directNpcResponse');

describe('characters with minds of their own', () => {
  it('keeps a thread per player and character, each prompt opening with its card', async () => {
    fake.replyChat({ text: 'Iron and fire, that is all an anvil needs.' });
    const toBrom = await direct(brom.id, 'Tell me about your anvil.');
    expect(toBrom.ack.ok).toBe(true);
    expect(
      lastRequest().system.startsWith('You are Brom. The blacksmith of Oakvale.\nPersonality: Gruff'),
    ).toBe(true);
    fake.replyChat({ text: 'Welcome, love! Sit by the fire.' });
    const toMaela = await direct(maela.id, 'Good evening!');
    const maelaPrompt = lastRequest();
    expect(maelaPrompt.system.startsWith('You are Maela.')).toBe(true);
    expect(maelaPrompt.system).not.toContain('You are Assistant');
    expect(maelaPrompt.text).not.toContain('Iron and fire');
    expect(maelaPrompt.text).not.toContain('anvil');
    expect(toMaela.ack.conversationId).not.toBe(toBrom.ack.conversationId);

    // Each thread is listed with its character, and its history names every speaker.
    const list = await t.api('GET', '/api/conversations', { token: alice.accessToken });
    const threads = list.body.conversations.filter(
      (x: { directNpcUserId: number | null }) => x.directNpcUserId,
    );
    expect(threads.map((x: { directNpcUserId: number }) => x.directNpcUserId).sort()).toEqual(
      [brom.id, maela.id].sort(),
    );
    const history = await t.api('GET', `/api/assistant/history?conversationId=${toBrom.ack.conversationId}`, {
      token: alice.accessToken,
    });
    expect(history.body.messages.map((m: { speaker: { name: string } }) => m.speaker.name)).toEqual([
      'Alice',
      'Brom',
    ]);

    // The same thread again: Brom's own line goes as his, nothing of Maela's comes along.
    fake.replyChat({ text: 'Aye.' });
    await direct(brom.id, 'And your hammer?');
    const again = lastRequest();
    expect(again.messages).toContainEqual({
      role: 'assistant',
      content: 'Iron and fire, that is all an anvil needs.',
    });
    expect(again.text).not.toContain('Welcome, love');
  });

  it("keeps what the player told one character from the other's prompt, unless both share", async () => {
    fake.replyChat({ text: 'Your secret is safe with me.' });
    await direct(brom.id, 'The secret of my anvil is starmetal from the northern crater.');
    fake.replyChat({ text: 'No idea, love.' });
    await direct(maela.id, 'What is the secret of my anvil, the starmetal?');
    expect(lastRequest().system).not.toContain('northern crater');
    fake.replyChat({ text: 'Starmetal, you said.' });
    await direct(brom.id, 'What is the secret of my anvil?');
    const bromKnows = lastRequest().system;
    expect(bromKnows).toContain('What Brom has heard from Alice:');
    expect(bromKnows).toContain('northern crater');

    for (const npc of [brom, maela]) {
      const { body: was } = await t.api('GET', `/api/admin/data/npcs/${npc.id}`, {
        token: admin.accessToken,
      });
      const put = await t.api('PUT', `/api/admin/data/npcs/${npc.id}`, {
        token: admin.accessToken,
        body: {
          name: was.name,
          description: was.description,
          personality: was.personality,
          speakingStyle: was.speakingStyle,
          goals: was.goals,
          playerMemory: 'shared',
        },
      });
      expect(put.body).toMatchObject({ playerMemory: 'shared', personality: was.personality });
    }
    fake.replyChat({ text: 'Starmetal! Brom told me, love.' });
    await direct(maela.id, 'What is the secret of my anvil, the starmetal?');
    expect(lastRequest().system).toContain('northern crater');
  });

  it('names every speaker in a scene, lets the addressed character answer, with its own lore', async () => {
    const scene = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'At the inn', npcUserIds: [brom.id, maela.id] },
    });
    fake.replyChat({
      text: JSON.stringify({ responses: [{ npcUserId: maela.id, text: 'Five silver, love.' }], choices: [] }),
    });
    await c.send('chatMessage', { message: 'How much is a room at the inn?', conversationId: scene.body.id });
    const director = lastRequest();
    expect(director.system).toContain("What Maela knows (Maela's own memories):");
    expect(director.system).toContain('five silver a night');
    expect(director.system.startsWith('This is a scene between Alice and Brom, Maela')).toBe(true);

    fake.replyChat({ text: 'Roads are muddy. Bandits near the ford.' });
    const { events } = await c.send('chatMessage', {
      message: 'Brom, what news from the road?',
      conversationId: scene.body.id,
    });
    const answered = events.filter((e) => e.name === 'assistantResponse').map((e) => e.payload.npcName);
    expect(answered).toEqual(['Brom']);
    // The turn's token usage comes with its reply.
    const reply = events.find((e) => e.name === 'assistantResponse')!.payload;
    expect(reply.usage).toEqual({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    const turn = lastRequest();
    expect(turn.system.startsWith('You are Brom.')).toBe(true);
    expect(turn.messages).toEqual([
      { role: 'user', content: 'Alice: How much is a room at the inn?' },
      { role: 'user', content: 'Maela: Five silver, love.' },
      { role: 'user', content: 'Alice: Brom, what news from the road?' },
    ]);
  });

  it('gives quests with their description, objectives and current step', async () => {
    const quest = await t.api('POST', '/api/admin/data/quests', {
      token: admin.accessToken,
      body: {
        title: 'The captain’s blade',
        description: 'Help Brom forge a blade for the guard captain.',
        objectives: [
          'Bring iron ore from the mine',
          'Fetch coal from the charcoal burner',
          'Quench the blade',
        ],
      },
    });
    expect(quest.body.objectives).toHaveLength(3);
    const progress = await t.api('PUT', `/api/admin/data/quests/${quest.body.id}/players/${alice.id}`, {
      token: admin.accessToken,
      body: { status: 'active', progress: 0.4, step: 1 },
    });
    expect(progress.body).toMatchObject({ step: 1, objectives: quest.body.objectives });
    fake.replyChat({ text: 'Coal next.' });
    await direct(brom.id, 'What should I do next for the blade?');
    const system = lastRequest().system;
    expect(system).toContain('Help Brom forge a blade for the guard captain.');
    expect(system).toContain('1. Bring iron ore from the mine (done)');
    expect(system).toContain('2. Fetch coal from the charcoal burner (current step)');
  });

  it('previews a direct turn as directNpcMessage would send it, each memory with its owner', async () => {
    const preview = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: {
        userId: alice.id,
        npcUserId: brom.id,
        direct: true,
        message: 'Is the forge fire still burning?',
      },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.npcUserId).toBe(brom.id);
    expect(preview.body.system.startsWith('You are Brom.')).toBe(true);
    const lore = preview.body.memories.find((m: { content: string }) => m.content.includes('forge fire'));
    expect(lore).toMatchObject({ owner: { id: brom.id, name: 'Brom' }, tier: 'assistant_core' });
    expect(typeof lore.similarity).toBe('number');
    const refused = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: alice.id, direct: true },
    });
    expect(refused.status).toBe(400);
  });
});
