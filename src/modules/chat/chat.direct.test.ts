// directNpcMessage end to end: the named NPC answers, bypassing the group director.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  alice = await createUser(t, 'public', { name: 'Alice' });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const client = (user: TestUser) => chatClient(t, user);

describe('directNpcMessage', () => {
  it('bypasses the director: npcThinking, then the NPC answers', async () => {
    const npc = await t.deps.services.characters.createNpc({ name: 'Oren', description: 'a ferryman' });
    const c = await client(alice);
    fake.replyChat({ text: 'The river is calm today.' });
    const { ack, events } = await c.send(
      'directNpcMessage',
      { npcUserId: npc.id, message: 'How is the river?' },
      'directNpcResponse',
    );
    expect(ack.ok).toBe(true);
    expect(events.map((e) => e.name)).toEqual(['npcThinking', 'directNpcResponse']);
    expect(events[1]!.payload).toMatchObject({
      npcUserId: npc.id,
      npcName: 'Oren',
      text: 'The river is calm today.',
    });
    expect(fake.chatRequests()[0]!.body.messages[0].content).toContain('Oren');
    const bad = await c.send('directNpcMessage', { npcUserId: alice.id, message: 'hi' });
    expect(bad.ack).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    c.socket.close();
  });
});
