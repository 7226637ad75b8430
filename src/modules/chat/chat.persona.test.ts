// A chat turn in a persona session (contract: "Persona sessions", `chatMessage.personaSessionId`):
// the session's own conversation and history, the persona's name, routing's persona type from the
// session (never the client), one memory base for every persona, and the 400s. Sessions are made
// through the persona module's route, as a client makes them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient, type ChatTestSocket } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let observerId: number;
let aliceChat: ChatTestSocket;

// The seeded tones: PUBLIC's and TECH's (what the system prompt says of the routed protocol).
const PUBLIC_TONE = 'professional and friendly';
const TECH_TONE = 'technical, precise and concise';

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  const cso = await createUser(t, 'cso');
  alice = await createUser(t, 'public', { name: 'Alice' });
  bob = await createUser(t, 'public', { name: 'Bob' });
  const observer = await t.api('POST', '/api/admin/instances', {
    token: cso.accessToken,
    body: { name: 'Alice’s observer', level: 8, source: 'portal', userId: alice.id },
  });
  expect(observer.status).toBe(201);
  observerId = observer.body.id;
  aliceChat = await chatClient(t, alice);
});
afterAll(async () => {
  aliceChat.socket.close();
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

/** Alice's session with a persona of her observer (created, or resumed). */
async function sessionOf(user: TestUser, persona: string) {
  const r = await t.api('POST', '/api/persona/session', {
    token: user.accessToken,
    body: { persona, observerId },
  });
  expect([200, 201]).toContain(r.status);
  return r.body as { id: string; conversationId: number; persona: string; personaType: string };
}

const history = (user: TestUser, query: string) =>
  t.api('GET', `/api/persona/chat/history?${query}`, { token: user.accessToken });

const systemPrompt = (n: number) => String(fake.chatRequests()[n]!.body.messages[0].content);

describe('chatMessage.personaSessionId', () => {
  it('runs the turn in the session’s conversation, as the persona, with its own history', async () => {
    const sister = await sessionOf(alice, 'Sister');
    const worker = await sessionOf(alice, 'Worker');

    fake.replyChat({ text: 'Zephyrine is a lovely name.' });
    const s = await aliceChat.send('chatMessage', {
      message: 'My cat is called Zephyrine',
      personaSessionId: sister.id,
      clientMessageId: 'persona-sister-1',
    });
    expect(s.ack).toMatchObject({ ok: true, conversationId: sister.conversationId });
    const response = s.events.find((e) => e.name === 'assistantResponse')!.payload;
    expect(response).toMatchObject({ conversationId: sister.conversationId, npcName: 'Sister' });
    expect(systemPrompt(0)).toContain('You are Sister.');

    fake.replyChat({ text: 'Ship it.' });
    const w = await aliceChat.send('chatMessage', {
      message: 'Review my deploy script',
      personaSessionId: worker.id,
    });
    expect(w.ack).toMatchObject({ ok: true, conversationId: worker.conversationId });
    expect(w.events.find((e) => e.name === 'assistantResponse')!.payload.npcName).toBe('Worker');

    // Separate histories: each session has its own exchange only.
    const sisterHistory = await history(alice, `sessionId=${sister.id}`);
    expect(sisterHistory.status).toBe(200);
    expect(sisterHistory.body.sessionId).toBe(sister.id);
    expect(sisterHistory.body.persona).toBe('Sister');
    expect(sisterHistory.body.messages.map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'My cat is called Zephyrine'],
      ['assistant', 'Zephyrine is a lovely name.'],
    ]);
    const workerHistory = await history(alice, `sessionId=${worker.id}`);
    expect(workerHistory.body.messages.map((m: any) => m.text)).toEqual([
      'Review my deploy script',
      'Ship it.',
    ]);
    // Paging backwards, like the assistant history.
    const older = await history(
      alice,
      `sessionId=${sister.id}&limit=1&before=${sisterHistory.body.messages[1].id}`,
    );
    expect(older.body.messages.map((m: any) => m.text)).toEqual(['My cat is called Zephyrine']);

    // A retry of the answered message is answered again as the persona, without a model call.
    const calls = fake.chatRequests().length;
    const retry = await aliceChat.send('chatMessage', {
      message: 'My cat is called Zephyrine',
      personaSessionId: sister.id,
      clientMessageId: 'persona-sister-1',
    });
    expect(retry.events.find((e) => e.name === 'assistantResponse')!.payload.npcName).toBe('Sister');
    expect(fake.chatRequests()).toHaveLength(calls);
  });

  it('shares one memory base: each exchange is the caller’s shared memory, which every persona reads', async () => {
    const sister = await sessionOf(alice, 'Sister');
    const observer = await sessionOf(alice, 'Observer');
    fake.replyChat({ text: 'Noted: the lighthouse keeper is Quillon.' });
    await aliceChat.send('chatMessage', {
      message: 'The lighthouse keeper is named Quillon',
      personaSessionId: sister.id,
    });
    const memories = await t.api('GET', '/api/memories?limit=200', { token: alice.accessToken });
    const stored = memories.body.memories.find((m: any) => m.content.includes('Quillon'));
    expect(stored).toMatchObject({
      userId: alice.id,
      source: 'shared',
      metadata: expect.objectContaining({ personaSessionId: sister.id, persona: 'Sister' }),
    });

    // Another persona's turn retrieves it: the memory is the caller's, not the session's.
    fake.reset();
    await aliceChat.send('chatMessage', { message: 'Who is Quillon?', personaSessionId: observer.id });
    expect(systemPrompt(0)).toContain('lighthouse keeper is named Quillon');
  });

  it("takes routing's persona type from the session, never from the client", async () => {
    const worker = await sessionOf(alice, 'Worker');
    const sister = await sessionOf(alice, 'Sister');
    await aliceChat.send('chatMessage', { message: 'Which protocol?', personaSessionId: worker.id });
    await aliceChat.send('chatMessage', { message: 'Which protocol?', personaSessionId: sister.id });
    // A claim in the payload is not read.
    await aliceChat.sendInvalid('chatMessage', { message: 'Which protocol?', personaType: 'coder' });
    expect(systemPrompt(0)).toContain(TECH_TONE);
    expect(systemPrompt(1)).toContain(PUBLIC_TONE);
    expect(systemPrompt(2)).toContain(PUBLIC_TONE);
    expect(systemPrompt(2)).not.toContain(TECH_TONE);
  });

  it('refuses another user’s session, another conversation and any npcUserId (400), storing nothing', async () => {
    const sister = await sessionOf(alice, 'Sister');
    const before = (await history(alice, `sessionId=${sister.id}`)).body.messages.length;
    const defaultConversation = (await aliceChat.send('chatMessage', { message: 'hello' })).ack
      .conversationId;
    const assistantId = await t.deps.services.characters.assistantUserId();
    const bobChat = await chatClient(t, bob);
    try {
      const cases: [ChatTestSocket, Record<string, unknown>, string][] = [
        [bobChat, { message: 'hi', personaSessionId: sister.id }, 'chatMessage.personaSessionId'],
        [
          aliceChat,
          { message: 'hi', personaSessionId: '00000000-0000-4000-8000-000000000000' },
          'chatMessage.personaSessionId',
        ],
        [aliceChat, { message: 'hi', personaSessionId: 'not-a-uuid' }, 'chatMessage.personaSessionId'],
        [
          aliceChat,
          { message: 'hi', personaSessionId: sister.id, conversationId: defaultConversation },
          'chatMessage.conversationId',
        ],
        [
          aliceChat,
          { message: 'hi', personaSessionId: sister.id, npcUserId: assistantId },
          'chatMessage.npcUserId',
        ],
      ];
      for (const [socket, payload, path] of cases) {
        const { ack, events } = await socket.sendInvalid('chatMessage', payload);
        expect(ack).toMatchObject({ ok: false, error: { code: 'validation_failed', status: 400 } });
        expect(ack.error.errors.map((e: any) => e.path)).toEqual([path]);
        expect(events.map((e) => e.name)).toContain('chatError');
      }
      // Its own conversation named explicitly is fine.
      const ok = await aliceChat.send('chatMessage', {
        message: 'same conversation',
        personaSessionId: sister.id,
        conversationId: sister.conversationId,
      });
      expect(ok.ack.ok).toBe(true);
      const after = (await history(alice, `sessionId=${sister.id}`)).body.messages;
      expect(after).toHaveLength(before + 2);
      expect(after.filter((m: any) => m.text === 'hi')).toEqual([]);
    } finally {
      bobChat.socket.close();
    }
  });
});
