// Persona sessions (contract: "Persona sessions") on the real server: create and resume, who may
// use an observer, the chat turn in a session (its own conversation and history, the persona's
// name, routing's persona type from the session, one memory base), refusals, the history route.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient, type ChatTestSocket } from '../chat/chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let cso: TestUser;
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
  cso = await createUser(t, 'cso');
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

const createSession = (user: TestUser, body: Record<string, unknown>) =>
  t.api('POST', '/api/persona/session', { token: user.accessToken, body });

async function sessionOf(user: TestUser, persona: string) {
  const r = await createSession(user, { persona, observerId });
  expect([200, 201]).toContain(r.status);
  return r.body as { id: string; conversationId: number; persona: string; personaType: string };
}

const history = (user: TestUser, query: string) =>
  t.api('GET', `/api/persona/chat/history?${query}`, { token: user.accessToken });

const systemPrompt = (n: number) => String(fake.chatRequests()[n]!.body.messages[0].content);

describe('POST /api/persona/session', () => {
  it('creates one session per user, observer and persona (201), and resumes it on a second create (200)', async () => {
    const first = await createSession(alice, { persona: 'Observer', observerId });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      persona: 'Observer',
      personaType: 'observer',
      observerId,
      userId: alice.id,
      conversationId: expect.any(Number),
      createdAt: expect.any(String),
      lastActiveAt: expect.any(String),
    });
    const again = await createSession(alice, { persona: 'Observer', observerId });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, conversationId: first.body.conversationId });
    expect(Date.parse(again.body.lastActiveAt)).toBeGreaterThanOrEqual(Date.parse(first.body.lastActiveAt));

    // Each persona its own session and conversation, with routing's persona type.
    const worker = await createSession(alice, { persona: 'Worker', observerId });
    const sister = await createSession(alice, { persona: 'Sister', observerId });
    expect([worker.status, sister.status]).toEqual([201, 201]);
    expect([worker.body.personaType, sister.body.personaType]).toEqual(['coder', 'sister']);
    expect(
      new Set([first.body.conversationId, worker.body.conversationId, sister.body.conversationId]).size,
    ).toBe(3);
  });

  it('resumes, not duplicates, when two creates race', async () => {
    const user = await createUser(t, 'cso');
    const answers = await Promise.all([1, 2, 3].map(() => createSession(user, { persona: 'Sister' })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  });

  it('defaults to the root observer, and lets only a CSO, an admin or the owner use an observer', async () => {
    const root = await t.deps.services.timeline.rootObserverId();
    const asCso = await createSession(cso, { persona: 'Sister' });
    expect(asCso.status).toBe(201);
    expect(asCso.body.observerId).toBe(root);

    // Not the owner: 403, for an unknown id too (no oracle); the root belongs to nobody here.
    for (const [user, body] of [
      [bob, { persona: 'Sister', observerId }],
      [bob, { persona: 'Sister', observerId: 987654 }],
      [alice, { persona: 'Sister' }],
    ] as const) {
      const r = await createSession(user, body);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    // An allowed caller naming no Level-8 instance: 404.
    expect((await createSession(cso, { persona: 'Sister', observerId: 987654 })).status).toBe(404);
    const level5 = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'not an observer', level: 5, source: 'portal' },
    });
    expect((await createSession(cso, { persona: 'Sister', observerId: level5.body.id })).status).toBe(404);
  });

  it('refuses bad bodies and anonymous callers', async () => {
    for (const body of [
      {},
      { persona: 'Coder' },
      { persona: 'sister' },
      { persona: 'Sister', observerId: 'x' },
    ]) {
      const r = await createSession(alice, body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await t.api('POST', '/api/persona/session', { body: { persona: 'Sister' } })).status).toBe(401);
    expect((await t.api('GET', '/api/persona/sessions')).status).toBe(401);
  });

  it("lists the caller's sessions, of one observer when asked", async () => {
    const mine = await t.api('GET', '/api/persona/sessions', { token: alice.accessToken });
    expect(mine.status).toBe(200);
    expect(mine.body.sessions.length).toBeGreaterThanOrEqual(3);
    expect(mine.body.sessions.every((s: any) => s.userId === alice.id && s.observerId === observerId)).toBe(
      true,
    );
    const root = await t.deps.services.timeline.rootObserverId();
    const none = await t.api('GET', `/api/persona/sessions?observerId=${root}`, { token: alice.accessToken });
    expect(none.body).toEqual({ sessions: [] });
    const others = await t.api('GET', '/api/persona/sessions', { token: bob.accessToken });
    expect(others.body).toEqual({ sessions: [] });
  });
});

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

describe('GET /api/persona/chat/history', () => {
  it('needs a sessionId (400); an unknown or another user’s session is 404', async () => {
    const sister = await sessionOf(alice, 'Sister');
    expect((await history(alice, '')).status).toBe(400);
    expect((await history(alice, 'sessionId=nope')).status).toBe(400);
    expect((await history(alice, `sessionId=${sister.id}&limit=0`)).status).toBe(400);
    const unknown = await history(alice, 'sessionId=00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const others = await history(bob, `sessionId=${sister.id}`);
    expect(others.status).toBe(404);
    expect(others.body.code).toBe('not_found');
  });
});
