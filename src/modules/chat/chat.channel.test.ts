// Routing step 2 on real turns (spec "Protocols and routing"; contract "Real time"): a chatMessage
// that names its channel is routed by the protocol configured for that channel, as the model's
// prompt and tools show; a channel without configuration routes as none, a core_primary account
// keeps its enforced protocol, and a bad channel id is refused with nothing stored.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from 'assistant-platform/client';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient, type ChatTestSocket } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let alice: TestUser;
let aliceChat: ChatTestSocket;

// The neutral protocol's identity line and its empty tool list tell its prompt from the public one.
const NEUTRAL_LINE = 'Keep this exchange light.';
const PRIVATE_LINE = 'This is a private conversation with the person closest to you';

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  const admin = await createUser(t, 'cso');
  alice = await createUser(t, 'public', { name: 'Alice' });
  aliceChat = await chatClient(t, alice);
  const configured = await t.api('POST', '/api/chat-platform/channel/config', {
    token: admin.accessToken,
    body: { channelId: 'quiet-room', protocolId: 'neutral_protocol_v1' },
  });
  expect(configured.status).toBe(200);
});
afterAll(async () => {
  aliceChat.socket.close();
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

/** The system prompt and the tool names of the n-th chat request the model received. */
function received(n: number) {
  const body = fake.chatRequests()[n]!.body;
  return {
    system: String(body.messages[0].content),
    tools: ((body.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name),
  };
}

describe('chatMessage.channelId', () => {
  it("routes the turn by the channel's protocol; without it, by the account", async () => {
    const viaChannel = await aliceChat.send('chatMessage', { message: 'Hello', channelId: 'quiet-room' });
    expect(viaChannel.ack).toMatchObject({ ok: true });
    const plain = await aliceChat.send('chatMessage', { message: 'Hello again' });
    expect(plain.ack).toMatchObject({ ok: true });

    expect(received(0).system).toContain(NEUTRAL_LINE);
    expect(received(0).tools).toEqual([]);
    expect(received(1).system).not.toContain(NEUTRAL_LINE);
    expect(received(1).tools).toEqual(t.deps.services.chat.toolCatalogue().map((x) => x.name));
  });

  it('routes a channel without configuration as none', async () => {
    const r = await aliceChat.send('chatMessage', { message: 'Hi', channelId: 'no-such-room' });
    expect(r.ack).toMatchObject({ ok: true });
    expect(received(0).system).not.toContain(NEUTRAL_LINE);
    expect(received(0).tools.length).toBeGreaterThan(0);
  });

  it("never overrides a core_primary account's private protocol", async () => {
    const core = await createUser(t, 'core_primary');
    const c = await chatClient(t, core);
    try {
      const r = await c.send('chatMessage', { message: 'Hi', channelId: 'quiet-room' });
      expect(r.ack).toMatchObject({ ok: true });
      expect(received(0).system).toContain(PRIVATE_LINE);
      expect(received(0).system).not.toContain(NEUTRAL_LINE);
    } finally {
      c.socket.close();
    }
  });

  it("is sent by the typed client's channelId option", async () => {
    const client = createClient({
      baseUrl: t.url,
      tokens: { accessToken: alice.accessToken, refreshToken: alice.refreshToken },
    });
    const chat = await client.chat();
    try {
      await chat.send('From the client', { channelId: 'quiet-room' });
      expect(received(0).system).toContain(NEUTRAL_LINE);
    } finally {
      chat.close();
    }
  });

  it('refuses an empty or over-long channel id by name, storing nothing', async () => {
    const user = await createUser(t, 'public');
    const c = await chatClient(t, user);
    try {
      for (const channelId of ['', '   ', 'x'.repeat(101), 42]) {
        const { ack } = await c.sendInvalid('chatMessage', { message: 'hi', channelId });
        expect(ack).toMatchObject({ ok: false, error: { code: 'validation_failed', status: 400 } });
        expect(JSON.stringify(ack.ok ? null : ack.error.errors)).toContain('channelId');
      }
      const stored = await t.deps.db
        .selectFrom('chat_messages')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      expect(stored).toEqual([]);
      expect(fake.chatRequests()).toHaveLength(0);
    } finally {
      c.socket.close();
    }
  });
});
