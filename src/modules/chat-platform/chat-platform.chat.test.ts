// The chat platform as a chat client, on the real app and database, over a fake gateway standing in
// for Discord and the fake model server: a mention of the bot, or a message in a configured
// channel (or a thread of one), is a chat turn of the linked account, routed by that channel and
// answered as a reply; everything else is left alone. The socket turn's limits hold, a redelivered
// message is answered once, and failures are short replies.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import {
  createChatPlatformBot,
  type ChatPlatformBot,
  type ChatPlatformTransport,
  type IncomingMessage,
  type MessageHandler,
} from './index.js';

const BOT = '500000000000000001';
const OPEN_CHANNEL = '300000000000000001'; // no configuration: only mentions are answered
const QUIET_CHANNEL = '300000000000000002'; // configured with the neutral protocol
const QUIET_THREAD = '300000000000000003'; // a thread of the quiet channel
const NEUTRAL_LINE = 'Keep this exchange light.';

/** Delivers messages as Discord's gateway would, and records what the bot answers. */
class FakeGateway implements ChatPlatformTransport {
  replies: { to: string; text: string }[] = [];
  typing: string[] = [];
  private onMessage: MessageHandler | undefined;
  private next = 700000000000000000n;

  async start(_commands: unknown, _onCommand: unknown, onMessage: MessageHandler) {
    this.onMessage = onMessage;
  }
  async post() {}
  async stop() {}

  /** A new message (a fresh id unless one is given); resolves once the bot's reply, if any, is
   * recorded, with that reply. */
  async deliver(m: Partial<IncomingMessage> & { platformUserId: string }): Promise<string | null> {
    const message: IncomingMessage = {
      id: String(++this.next),
      content: `<@${BOT}> hello`,
      fromBot: false,
      channelId: OPEN_CHANNEL,
      parentChannelId: null,
      guildId: '200000000000000001',
      mentionsBot: false,
      botUserId: BOT,
      ...m,
    };
    const text = await this.onMessage!(message, () => this.typing.push(message.id));
    if (text !== null) this.replies.push({ to: message.id, text });
    return text;
  }
}

let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;
let gateway: FakeGateway;
let bot: ChatPlatformBot;
let platformUsers = 400000000000000000n;

/** A new account linked to a new platform user id. */
async function linkedUser(kind: 'public' | 'core_primary' = 'public') {
  const user = await createUser(t, kind);
  const platformUserId = String(++platformUsers);
  const linked = await t.api('PUT', `/api/admin/chat-platform/users/${platformUserId}`, {
    token: admin.accessToken,
    body: { userId: user.id },
  });
  expect(linked.status).toBe(201);
  return { user, platformUserId };
}

const storedMessages = (userId: number) =>
  t.deps.db
    .selectFrom('chat_messages')
    .select(['role', 'text', 'client_message_id', 'status'])
    .where('conversation_id', 'in', (q) =>
      q.selectFrom('chat_messages').select('conversation_id').where('user_id', '=', userId),
    )
    .orderBy('id')
    .execute();

/** The system prompt, the last user text and the tool names of the n-th chat request. */
function received(n: number) {
  const body = fake.chatRequests()[n]!.body;
  const messages = body.messages as { role: string; content: unknown }[];
  return {
    system: String(messages[0]!.content),
    user: String(messages.filter((m) => m.role === 'user').at(-1)!.content),
    tools: ((body.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name),
  };
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '3' }));
  admin = await createUser(t, 'cso');
  gateway = new FakeGateway();
  bot = (await createChatPlatformBot({
    token: 'a-token',
    gateway: true,
    commands: t.deps.services.chatPlatformCommands,
    chat: t.deps.services.chatPlatformChat,
    log: t.deps.log,
    transport: async () => gateway,
  }))!;
  await bot.start();
  const configured = await t.api('POST', '/api/chat-platform/channel/config', {
    token: admin.accessToken,
    body: { channelId: QUIET_CHANNEL, protocolId: 'neutral_protocol_v1' },
  });
  expect(configured.status).toBe(200);
});
afterAll(async () => {
  await bot.stop();
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  gateway.replies = [];
  gateway.typing = [];
});

describe('a message to the bot', () => {
  it("is a chat turn of the linked account, without the mention, answered as a reply and stored in the account's conversation", async () => {
    const { user, platformUserId } = await linkedUser();
    fake.replyChat({ text: 'Hello from the assistant.' });
    const reply = await gateway.deliver({
      id: '710000000000000001',
      platformUserId,
      content: `<@${BOT}> What is the weather like?`,
      mentionsBot: true,
    });
    expect(reply).toBe('Hello from the assistant.');
    expect(gateway.replies).toEqual([{ to: '710000000000000001', text: 'Hello from the assistant.' }]);
    expect(gateway.typing).toEqual(['710000000000000001']);
    expect(fake.chatRequests()).toHaveLength(1);
    const call = received(0);
    expect(call.user).toBe('What is the weather like?');
    // An unconfigured channel routes as none: the account's own (public) protocol, with tools.
    expect(call.system).not.toContain(NEUTRAL_LINE);
    expect(call.tools.length).toBeGreaterThan(0);
    expect(fake.chatRequests()[0]!.body.stream).toBeFalsy();
    expect(await storedMessages(user.id)).toEqual([
      {
        role: 'user',
        text: 'What is the weather like?',
        client_message_id: 'chat-platform:710000000000000001',
        status: 'answered',
      },
      { role: 'assistant', text: 'Hello from the assistant.', client_message_id: null, status: 'answered' },
    ]);
  });

  it("in a configured channel, or a thread of one, needs no mention and is routed by the channel's protocol", async () => {
    const { platformUserId } = await linkedUser();
    expect(await gateway.deliver({ platformUserId, channelId: QUIET_CHANNEL, content: 'Hi all' })).toBe(
      'fake reply to: Hi all',
    );
    expect(
      await gateway.deliver({
        platformUserId,
        channelId: QUIET_THREAD,
        parentChannelId: QUIET_CHANNEL,
        content: 'In the thread',
      }),
    ).toBe('fake reply to: In the thread');
    expect(fake.chatRequests()).toHaveLength(2);
    for (const n of [0, 1]) {
      expect(received(n).system).toContain(NEUTRAL_LINE);
      expect(received(n).tools).toEqual([]);
    }
  });

  it("keeps a core_primary account's enforced protocol in a configured channel", async () => {
    const { platformUserId } = await linkedUser('core_primary');
    await gateway.deliver({ platformUserId, channelId: QUIET_CHANNEL, content: 'Hello' });
    expect(received(0).system).not.toContain(NEUTRAL_LINE);
    expect(received(0).system).toContain('This is a private conversation');
  });

  it('leaves alone what is not addressed to the bot, and what bots write', async () => {
    const { user, platformUserId } = await linkedUser();
    expect(await gateway.deliver({ platformUserId, content: 'just chatting' })).toBeNull();
    expect(
      await gateway.deliver({ platformUserId, channelId: QUIET_THREAD, content: 'a thread elsewhere' }),
    ).toBeNull();
    expect(
      await gateway.deliver({ platformUserId, channelId: QUIET_CHANNEL, content: 'beep', fromBot: true }),
    ).toBeNull();
    expect(
      await gateway.deliver({ platformUserId, content: `<@${BOT}> beep`, mentionsBot: true, fromBot: true }),
    ).toBeNull();
    expect(gateway.replies).toEqual([]);
    expect(gateway.typing).toEqual([]);
    expect(fake.chatRequests()).toHaveLength(0);
    expect(await storedMessages(user.id)).toEqual([]);
  });

  it('from a platform user linked to no account gets a short "link your account" reply, and nothing else', async () => {
    const reply = await gateway.deliver({
      platformUserId: '400000000000099999',
      content: `<@${BOT}> hello?`,
      mentionsBot: true,
    });
    expect(reply).toMatch(/^Link your account first: .*chat-platform user 400000000000099999/);
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('delivered again, at once or later, is answered once: one turn, one model call, one reply', async () => {
    const { user, platformUserId } = await linkedUser();
    const again = { id: '720000000000000001', platformUserId, channelId: QUIET_CHANNEL, content: 'Once?' };
    const [first, second] = await Promise.all([gateway.deliver(again), gateway.deliver(again)]);
    expect([first, second].filter((r) => r !== null)).toEqual(['fake reply to: Once?']);
    expect(await gateway.deliver(again)).toBeNull();
    expect(fake.chatRequests()).toHaveLength(1);
    expect(gateway.replies).toHaveLength(1);
    expect((await storedMessages(user.id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});

describe("a chat-platform turn's limits and failures", () => {
  it("are the socket turn's: over-long and empty messages are refused by name, storing nothing", async () => {
    const { user, platformUserId } = await linkedUser();
    const long = await gateway.deliver({
      platformUserId,
      channelId: QUIET_CHANNEL,
      content: 'x'.repeat(8001),
    });
    expect(long).toMatch(/^Validation failed: .*\n- chatMessage\.message: /);
    const empty = await gateway.deliver({ platformUserId, content: `<@${BOT}>`, mentionsBot: true });
    expect(empty).toMatch(/^Validation failed: .*\n- chatMessage\.message: /);
    expect(fake.chatRequests()).toHaveLength(0);
    expect(await storedMessages(user.id)).toEqual([]);
  });

  it('count against the rate limit a socket turn counts against, and say when to retry', async () => {
    const { user, platformUserId } = await linkedUser();
    for (let i = 1; i <= 3; i++)
      expect(await gateway.deliver({ platformUserId, channelId: QUIET_CHANNEL, content: `n${i}` })).toBe(
        `fake reply to: n${i}`,
      );
    const refused = await gateway.deliver({ platformUserId, channelId: QUIET_CHANNEL, content: 'n4' });
    expect(refused).toMatch(/^Too many requests: At most 3 messages a minute; retry in \d+ s$/);
    expect(fake.chatRequests()).toHaveLength(3);
    expect((await storedMessages(user.id)).filter((m) => m.role === 'user')).toHaveLength(3);
  });

  it("answer a model failure with a short reply and keep the message, failed, as a socket turn's", async () => {
    const { user, platformUserId } = await linkedUser();
    fake.failNext('chat', { status: 500, times: 5 });
    const reply = await gateway.deliver({
      platformUserId,
      channelId: QUIET_CHANNEL,
      content: 'Are you there?',
    });
    expect(reply).toMatch(/^Model provider unavailable: /);
    expect(reply!.split('\n')).toHaveLength(1);
    expect(await storedMessages(user.id)).toMatchObject([{ role: 'user', status: 'failed' }]);
  });
});
