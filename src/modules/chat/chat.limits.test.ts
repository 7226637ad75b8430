// The chat turn's limits against a server of their own: how much history the model is sent
// (CHAT_HISTORY_MESSAGES) and the per-minute message limit (CHAT_RATE_LIMIT).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient, type ChatTestSocket } from './chat.fixtures.js';

let fake: FakeModelServer;

beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('chat history', () => {
  it('sends the model the last CHAT_HISTORY_MESSAGES earlier messages, never the new one twice', async () => {
    const short = await createTestApp(fake.env({ CHAT_HISTORY_MESSAGES: '3' }));
    let c: ChatTestSocket | undefined;
    try {
      c = await chatClient(short, await createUser(short));
      for (let i = 1; i <= 4; i++) {
        fake.reset();
        fake.replyChat({ text: `Answer ${i}.` });
        const { ack } = await c.send('chatMessage', { message: `Question ${i}` });
        expect(ack.ok).toBe(true);
        const sent = fake.chatRequests()[0]!.body.messages.filter((m: any) => m.role !== 'system');
        const all = Array.from({ length: i - 1 }, (_, k) => [
          ['user', `Question ${k + 1}`],
          ['assistant', `Answer ${k + 1}.`],
        ]).flat();
        expect(sent.map((m: any) => [m.role, m.content])).toEqual([
          ...all.slice(-3),
          ['user', `Question ${i}`],
        ]);
      }
    } finally {
      c?.socket.close();
      await short.close();
    }
  });
});

describe('chat rate limit', () => {
  it('answers rate_limited past the per-minute limit', async () => {
    const limited = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '2' }));
    let c: ChatTestSocket | undefined;
    try {
      c = await chatClient(limited, await createUser(limited));
      const turns = [];
      for (let i = 0; i < 3; i++) {
        if (i === 2) fake.reset();
        turns.push(await c.send('chatMessage', { message: `m${i}`, clientMessageId: `rl-${i}` }));
      }
      const acks = turns.map((turn) => turn.ack);
      expect(acks.map((a) => a.ok)).toEqual([true, true, false]);
      expect(acks[2].error).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(acks[2].error.retryAfter).toBeGreaterThan(0);
      // The chatError names the message and its conversation, so the client can retry it there.
      expect(turns[2]!.events.filter((e) => e.name === 'chatError').map((e) => e.payload)).toEqual([
        expect.objectContaining({
          code: 'rate_limited',
          clientMessageId: 'rl-2',
          conversationId: acks[0].conversationId,
        }),
      ]);
      // The refused message cost no model call: its embedding waits for the rate limit.
      expect(fake.embeddingRequests()).toHaveLength(0);
      expect(fake.chatRequests()).toHaveLength(0);
    } finally {
      c?.socket.close();
      await limited.close();
    }
  });
});
