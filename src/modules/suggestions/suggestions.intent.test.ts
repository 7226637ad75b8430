// Intent analysis with a remote model (contract "Suggestions"): keywords first; with no keyword
// hit one structured call through the model gateway, made once per message; an answer out of
// format or a failed call suggests nothing; a conversation's last user message is what is
// analysed there. The model server is the local fake (the outside world).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { suggestionsClient } from './suggestions.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let user: TestUser;
let c: ReturnType<typeof suggestionsClient>;

beforeAll(async () => {
  fake = await startFakeModelServer();
  // A user causes at most as many intent calls a minute as chat turns (4 here).
  t = await createTestApp(
    fake.env({ MODEL_MAX_RETRIES: '0', MODEL_RETRY_BASE_MS: '10', CHAT_RATE_LIMIT: '4' }),
  );
  user = await createUser(t);
  c = suggestionsClient(t);
});
afterAll(async () => {
  closeSockets();
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const intentCalls = () =>
  fake
    .chatRequests()
    .filter((r) => JSON.stringify(r.body.messages).includes('You classify what a user wants'));

describe('intent analysis with a remote model', () => {
  it('asks the model once per message without a keyword; keywords need no call', async () => {
    const channel = 'chan-remote-1';
    const message = 'Our nightly report stopped arriving';
    fake.replyChat({ text: '{"intent":"bug","confidence":0.65}' });
    const first = await c.list(user, channel, message);
    expect(first.suggestions).toMatchObject([
      {
        type: 'SELECT_PROTOCOL',
        confidence: 0.65,
        metadata: { intent: 'bug', protocolId: 'triage_support_v1' },
      },
    ]);
    expect(intentCalls()).toHaveLength(1);
    expect(JSON.stringify(intentCalls()[0]!.body.messages)).toContain(message);
    // The same message again: the stored answer, no second call.
    const again = await c.list(user, channel, message);
    expect(again.suggestions.map((s: any) => s.id)).toEqual(first.suggestions.map((s: any) => s.id));
    expect(intentCalls()).toHaveLength(1);
    // A keyword decides by itself.
    expect((await c.list(user, channel, 'refactor the API client')).suggestions).toMatchObject([
      { type: 'SELECT_PROTOCOL', confidence: 0.7, metadata: { intent: 'development' } },
    ]);
    expect(intentCalls()).toHaveLength(1);
  });

  it('an answer out of format, or a failed call, suggests nothing and stores nothing', async () => {
    fake.replyChat({ text: 'I think this is probably a bug.' });
    expect((await c.list(user, 'chan-remote-2', 'something odd happened')).suggestions).toEqual([]);
    fake.failNext('chat', { status: 500, times: 2 });
    expect((await c.list(user, 'chan-remote-3', 'another odd thing')).suggestions).toEqual([]);
    expect(intentCalls()).toHaveLength(2);
    expect(await c.history(user, 'chan-remote-2')).toEqual([]);
    expect(await c.history(user, 'chan-remote-3')).toEqual([]);
  });

  it('calls the model at most so many times a minute per user', async () => {
    const busy = await createUser(t);
    for (let n = 1; n <= 4; n++) {
      fake.replyChat({ text: '{"intent":"development","confidence":0.6}' });
      expect(await c.types(busy, 'chan-remote-4', `a new thing number ${n}`)).toEqual(['SELECT_PROTOCOL']);
    }
    expect(intentCalls()).toHaveLength(4);
    expect(await c.types(busy, 'chan-remote-4', 'a new thing number 5')).toEqual([]);
    expect(intentCalls()).toHaveLength(4);
    // Another user is counted apart.
    fake.replyChat({ text: '{"intent":"bug","confidence":0.6}' });
    expect(await c.types(await createUser(t), 'chan-remote-4', 'a new thing number 5')).toEqual([
      'SELECT_PROTOCOL',
    ]);
  });

  it("analyses a conversation's last user message", async () => {
    const socket = await connectSocket(t.url, { auth: { token: user.accessToken } });
    const { ack } = await socket.send(
      'chatMessage',
      { message: 'Could you implement a CSV export?' },
      'assistantIdle',
    );
    expect(ack).toMatchObject({ ok: true });
    fake.reset();
    const contextId = `conversation:${ack.conversationId}`;
    expect((await c.list(user, contextId)).suggestions).toMatchObject([
      { type: 'SELECT_PROTOCOL', context: { contextId }, metadata: { intent: 'development' } },
    ]);
    expect(intentCalls()).toHaveLength(0);
    socket.close();
  });
});
