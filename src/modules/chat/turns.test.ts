// POST /api/chat/turns: the socket's turn over HTTP, as Server-Sent Events named as the socket's
// events (in the socket's order, closed by the ack) or as one JSON answer; the same idempotency,
// direct messages and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let ada: TestUser;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  ada = await createUser(t, 'public', { name: 'Ada' });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** The turn as Server-Sent Events: each frame's event name and parsed data. */
async function streamTurn(token: string, body: unknown) {
  const res = await fetch(`${t.url}/api/chat/turns`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const events = text
    .split('\n\n')
    .filter((f) => f.startsWith('event:'))
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))!.slice(7);
      const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6));
      return { event, data };
    });
  return { res, events, names: events.map((e) => e.event) };
}

/** Event names with each run of deltas as one. */
const collapsed = (names: string[]) =>
  names.filter((n, i) => n !== 'assistantResponseDelta' || names[i - 1] !== n);

describe('POST /api/chat/turns', () => {
  it('streams the socket’s events in the socket’s order, closed by the ack; the turn is stored', async () => {
    fake.replyChat({ text: 'Welcome back to the coast, Ada.' });
    const { res, events, names } = await streamTurn(ada.accessToken, {
      message: 'I am back from the coast.',
      clientMessageId: 'sse-1',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(collapsed(names)).toEqual([
      'assistantThinking',
      'assistantResponseDelta',
      'assistantResponse',
      'assistantIdle',
      'ack',
    ]);
    const deltas = events.filter((e) => e.event === 'assistantResponseDelta').map((e) => e.data.delta);
    expect(deltas.join('')).toBe('Welcome back to the coast, Ada.');
    const response = events.find((e) => e.event === 'assistantResponse')!.data;
    expect(response).toMatchObject({ text: 'Welcome back to the coast, Ada.', npcName: expect.any(String) });
    const ack = events.at(-1)!.data;
    expect(ack).toMatchObject({ ok: true, conversationId: response.conversationId });

    // The same turn on a socket sends the same events in the same order.
    const socket = await chatClient(t, ada);
    fake.replyChat({ text: 'And now over the socket.' });
    const sent = await socket.send('chatMessage', { message: 'Hello over the socket' });
    expect([...collapsed(sent.events.map((e) => e.name)), 'ack']).toEqual(collapsed(names));
    socket.socket.close();

    const history = await t.api('GET', `/api/assistant/history?conversationId=${ack.conversationId}`, {
      token: ada.accessToken,
    });
    const texts = history.body.messages.map((m: { text: string }) => m.text);
    expect(texts).toEqual(
      expect.arrayContaining(['I am back from the coast.', 'Welcome back to the coast, Ada.']),
    );
  });

  it('answers once as JSON without the stream; a retried clientMessageId replays without a model call', async () => {
    fake.replyChat({ text: 'The lighthouse is lit.' });
    const body = { message: 'Is the lighthouse lit?', clientMessageId: 'json-1' };
    const first = await t.api('POST', '/api/chat/turns', { token: ada.accessToken, body });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(first.body).toMatchObject({
      conversationId: expect.any(Number),
      messageId: expect.any(Number),
      replies: [{ text: 'The lighthouse is lit.' }],
    });
    const calls = fake.chatRequests().length;
    const again = await t.api('POST', '/api/chat/turns', { token: ada.accessToken, body });
    expect(again.body).toEqual(first.body);
    expect(fake.chatRequests().length).toBe(calls);
  });

  it('a direct turn: npcThinking and directNpcResponse, or as JSON', async () => {
    const npc = await t.deps.services.characters.createNpc({ name: 'Oren', description: 'a ferryman' });
    fake.replyChat({ text: 'The river is calm.' });
    const streamed = await streamTurn(ada.accessToken, {
      direct: true,
      npcUserId: npc.id,
      message: 'The river?',
    });
    expect(streamed.names).toEqual(['npcThinking', 'directNpcResponse', 'ack']);
    expect(streamed.events[1]!.data).toMatchObject({
      npcUserId: npc.id,
      npcName: 'Oren',
      text: 'The river is calm.',
    });
    fake.replyChat({ text: 'Still calm.' });
    const json = await t.api('POST', '/api/chat/turns', {
      token: ada.accessToken,
      body: { direct: true, npcUserId: npc.id, message: 'And now?' },
    });
    expect(json.body.replies).toEqual([expect.objectContaining({ npcName: 'Oren', text: 'Still calm.' })]);
    const mixed = await t.api('POST', '/api/chat/turns', {
      token: ada.accessToken,
      body: { direct: true, npcUserId: npc.id, message: 'x', conversationId: 3 },
    });
    expect(mixed.status).toBe(400);
  });

  it('a refused turn: the problem with its status as JSON, chatError then the ack as events', async () => {
    const body = { direct: true, npcUserId: ada.id, message: 'you are no NPC' };
    const json = await t.api('POST', '/api/chat/turns', { token: ada.accessToken, body });
    expect(json.status).toBe(400);
    expect(json.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(json.body).toMatchObject({ code: 'validation_failed', clientMessageId: null });
    const streamed = await streamTurn(ada.accessToken, { ...body, clientMessageId: 'bad-1' });
    expect(streamed.names).toEqual(['chatError', 'ack']);
    expect(streamed.events[0]!.data).toMatchObject({ code: 'validation_failed', clientMessageId: 'bad-1' });
    expect(streamed.events[1]!.data).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect((await t.api('POST', '/api/chat/turns', { body: { message: 'hi' } })).status).toBe(401);
    const empty = await t.api('POST', '/api/chat/turns', { token: ada.accessToken, body: { message: '' } });
    expect(empty.status).toBe(400);
  });
});
