// The chat turn end to end: a real socket client, the real server and database, and a local
// OpenAI-compatible model server (the only fake: the outside world).
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient } from './chat.fixtures.js';
import { VISION_JOB } from './chat.jobs.js';

let fake: FakeModelServer;
let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(
    fake.env({ MODEL_MAX_RETRIES: '1', MODEL_RETRY_BASE_MS: '10', CHAT_RATE_LIMIT: '1000' }),
  );
  alice = await createUser(t, 'public', { name: 'Alice' });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

/** A signed-in chat client (the shared test client, typed by the chat event maps). */
const client = (user: TestUser) => chatClient(t, user);

describe('chatMessage', () => {
  it('runs a plain turn: thinking, streamed deltas, one response, idle; stores both messages', async () => {
    const c = await client(alice);
    fake.replyChat({
      text: 'Hello Alice, welcome back! <choices>["Tell me a story","What can I do?"]</choices>',
    });
    const { ack, events } = await c.send('chatMessage', { message: 'Hi there', clientMessageId: 'plain-1' });
    expect(ack).toMatchObject({ ok: true });
    const names = events.map((e) => e.name);
    expect(names[0]).toBe('assistantThinking');
    expect(names.at(-1)).toBe('assistantIdle');
    expect(names.filter((n) => n === 'assistantResponse')).toHaveLength(1);
    const response = events.find((e) => e.name === 'assistantResponse')!.payload;
    expect(response).toMatchObject({
      conversationId: ack.conversationId,
      text: 'Hello Alice, welcome back!',
    });
    expect(typeof response.npcName).toBe('string');
    // Deltas carry the reply's id and never the suggested-replies block.
    const deltas = events.filter((e) => e.name === 'assistantResponseDelta').map((e) => e.payload);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => d.messageId === response.messageId)).toBe(true);
    expect(deltas.map((d) => d.delta).join('')).not.toContain('<choices');
    // One chat call, one embedding request (the query, batched with pending memories).
    expect(fake.chatRequests()).toHaveLength(1);
    expect(fake.embeddingRequests().length).toBeLessThanOrEqual(1);

    const history = await t.api('GET', `/api/assistant/history?conversationId=${ack.conversationId}`, {
      token: alice.accessToken,
    });
    expect(history.body.messages.map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'Hi there'],
      ['assistant', 'Hello Alice, welcome back!'],
    ]);
    const choices = await t.api('GET', `/api/assistant/choices?conversationId=${ack.conversationId}`, {
      token: alice.accessToken,
    });
    expect(choices.body.choices.map((x: any) => x.text)).toEqual(['Tell me a story', 'What can I do?']);
    c.socket.close();
  });

  it("records the turn's latency and, apart from the model's time, its overhead in /metrics", async () => {
    const read = async () => {
      const text = (await t.api('GET', '/metrics')).text;
      const value = (name: string) => Number(text.match(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm'))?.[1] ?? 0);
      return {
        okTurns: value('chat_turn_duration_seconds_count\\{event="chatMessage",outcome="ok"\\}'),
        turnSeconds: value('chat_turn_duration_seconds_sum\\{event="chatMessage",outcome="ok"\\}'),
        overheadTurns: value('chat_turn_overhead_seconds_count\\{event="chatMessage"\\}'),
        overheadSeconds: value('chat_turn_overhead_seconds_sum\\{event="chatMessage"\\}'),
        failedTurns: value('chat_turn_duration_seconds_count\\{event="chatMessage",outcome="error"\\}'),
      };
    };
    const c = await client(alice);
    const before = await read();
    // A slow model: its 400 ms belong to the turn's latency, not to the service's overhead.
    fake.replyChat({ text: 'Slowly, yes.', delayMs: 400 });
    expect((await c.send('chatMessage', { message: 'Are you slow?' })).ack.ok).toBe(true);
    const after = await read();
    expect(after.okTurns - before.okTurns).toBe(1);
    expect(after.overheadTurns - before.overheadTurns).toBe(1);
    const turn = after.turnSeconds - before.turnSeconds;
    const overhead = after.overheadSeconds - before.overheadSeconds;
    expect(turn).toBeGreaterThanOrEqual(0.4);
    expect(overhead).toBeGreaterThanOrEqual(0);
    expect(overhead).toBeLessThanOrEqual(turn - 0.4);

    // A failed turn counts as an error, without an overhead.
    fake.failNext('chat', { status: 400 });
    expect((await c.send('chatMessage', { message: 'And now?' })).ack.ok).toBe(false);
    const failed = await read();
    expect(failed.failedTurns - after.failedTurns).toBe(1);
    expect(failed.overheadTurns).toBe(after.overheadTurns);
    c.socket.close();
  });

  it("embeds the previous exchange in the next turn's one embedding request, stored by the turn's end", async () => {
    const c = await client(alice);
    fake.replyChat({ text: 'The ferry leaves at noon.' });
    const first = await c.send('chatMessage', { message: 'When does the ferry leave?' });
    expect(first.ack).toMatchObject({ ok: true });
    fake.reset();
    fake.replyChat({ text: 'At the east pier.' });
    const second = await c.send('chatMessage', { message: 'Where does it leave from?' });
    expect(second.ack).toMatchObject({ ok: true });
    expect(fake.embeddingRequests()).toHaveLength(1);
    const inputs = fake.embeddedInputs();
    expect(inputs[0]).toBe('Where does it leave from?');
    expect(inputs.slice(1).some((i) => i.includes('The ferry leaves at noon.'))).toBe(true);
    // The first exchange's embedding was stored before the turn answered its ack.
    const exchange = await t.deps.db
      .selectFrom('memory_chunks as k')
      .leftJoin('memory_embed_queue as q', 'q.chunk_id', 'k.id')
      .select(['k.id', 'q.chunk_id as queued'])
      .where('k.content', 'like', '%The ferry leaves at noon.%')
      .execute();
    expect(exchange).toHaveLength(1);
    expect(exchange[0]!.queued).toBeNull();
    c.socket.close();
  });

  it('answers the turn even when its exchange cannot be stored as a memory', async () => {
    const c = await client(alice);
    // The database refuses this one exchange's memory (the outside world failing mid-turn).
    await sql`create function refuse_exchange() returns trigger language plpgsql as $$
      begin if new.content like '%gull-refused%' then raise exception 'refused'; end if; return new; end $$`.execute(
      t.deps.db,
    );
    await sql`create trigger refuse_exchange before insert on memories for each row execute function refuse_exchange()`.execute(
      t.deps.db,
    );
    try {
      fake.replyChat({ text: 'The gull-refused flock nests on the pier.' });
      const { ack, events } = await c.send('chatMessage', { message: 'Where do gulls nest?' });
      expect(ack).toMatchObject({ ok: true });
      expect(events.map((e) => e.name)).not.toContain('chatError');
      const response = events.find((e) => e.name === 'assistantResponse')!.payload;
      expect(response.text).toBe('The gull-refused flock nests on the pier.');
      expect(events.at(-1)!.name).toBe('assistantIdle');
      // The reply is stored and the message answered; only the memory is missing.
      const messages = await t.deps.db
        .selectFrom('chat_messages')
        .select(['role', 'status'])
        .where('conversation_id', '=', ack.conversationId)
        .where('text', 'in', ['Where do gulls nest?', 'The gull-refused flock nests on the pier.'])
        .orderBy('id')
        .execute();
      expect(messages).toEqual([
        { role: 'user', status: 'answered' },
        { role: 'assistant', status: expect.any(String) },
      ]);
      const memories = await t.deps.db
        .selectFrom('memories')
        .select('id')
        .where('content', 'like', '%gull-refused%')
        .execute();
      expect(memories).toHaveLength(0);
    } finally {
      await sql`drop trigger refuse_exchange on memories; drop function refuse_exchange()`.execute(t.deps.db);
      c.socket.close();
    }
  });

  it('answers a repeated clientMessageId again without storing it twice or calling the model', async () => {
    const c = await client(alice);
    fake.replyChat({ text: 'First answer' });
    const first = await c.send('chatMessage', { message: 'Once only', clientMessageId: 'dup-1' });
    const again = await c.send('chatMessage', { message: 'Once only', clientMessageId: 'dup-1' });
    expect(again.ack).toMatchObject({ ok: true, messageId: first.ack.messageId });
    expect(again.events.find((e) => e.name === 'assistantResponse')!.payload.text).toBe('First answer');
    expect(fake.chatRequests()).toHaveLength(1);
    const rows = await t.deps.db
      .selectFrom('chat_messages')
      .select('id')
      .where('client_message_id', '=', 'dup-1')
      .execute();
    expect(rows).toHaveLength(1);
    c.socket.close();
  });

  it("sends the model the conversation's earlier messages once, then the new one", async () => {
    const user = await createUser(t, 'public', { name: 'Historian' });
    const c = await client(user);
    fake.replyChat({ text: 'First answer.' });
    const first = await c.send('chatMessage', { message: 'First question' });
    fake.reset();
    fake.replyChat({ text: 'Second answer.' });
    await c.send('chatMessage', { message: 'Second question', conversationId: first.ack.conversationId });
    const sent = fake.chatRequests()[0]!.body.messages.filter((m: any) => m.role !== 'system');
    expect(sent.map((m: any) => [m.role, m.content])).toEqual([
      ['user', 'First question'],
      ['assistant', 'First answer.'],
      ['user', 'Second question'],
    ]);
    c.socket.close();
  });

  it('composes the routed protocol into the system prompt for each identity', async () => {
    const cases = [
      ['core_primary', 'Private protocol'],
      ['developer', 'Tech protocol'],
      ['cso', 'System protocol'],
      ['public', 'Public protocol'],
    ] as const;
    for (const [kind, name] of cases) {
      fake.reset();
      const user = await createUser(t, kind);
      const c = await client(user);
      await c.send('chatMessage', { message: 'Who are you?' });
      const system = fake.chatRequests()[0]!.body.messages[0];
      expect(system.role).toBe('system');
      expect(system.content).toContain(name);
      c.socket.close();
    }
  });

  it('runs a currency tool call as the director: balance changes, a timeline event, a second model call', async () => {
    const player = await createUser(t, 'public', { name: 'Tool Player' });
    await t.deps.services.inventory.modifyCurrency(player.id, 10);
    const c = await client(player);
    fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: { amount: 25 } }] });
    fake.replyChat({ text: 'I gave you 25 energy coins.' });
    const { ack, events } = await c.send('chatMessage', {
      message: 'Reward me please',
      preferences: { stream: false },
    });
    expect(ack.ok).toBe(true);
    expect(events.find((e) => e.name === 'assistantResponse')!.payload.text).toBe(
      'I gave you 25 energy coins.',
    );
    expect(fake.chatRequests()).toHaveLength(2);
    const second = fake.chatRequests()[1]!.body.messages;
    expect(
      second.some((m: any) => m.role === 'tool' && String(m.content).includes('"energy_coins":35')),
    ).toBe(true);
    const profile = await t.api('GET', '/api/user/profile', { token: player.accessToken });
    expect(profile.body.energy_coins).toBe(35);
    const event = await t.deps.db
      .selectFrom('timeline_events')
      .selectAll()
      .where('user_id', '=', player.id)
      .where('event_type', '=', 'currency_changed')
      .execute();
    expect(event).toEqual([
      expect.objectContaining({
        event_text: 'Awarded 25 energy coins (balance 35)',
        metadata: expect.objectContaining({ tool: 'modifyCurrency', amount: 25, before: 10, after: 35 }),
      }),
    ]);
    c.socket.close();
  });

  it('refuses a spend the balance cannot cover, tells the model, and keeps the balance', async () => {
    const player = await createUser(t);
    await t.deps.services.inventory.modifyCurrency(player.id, 5);
    const c = await client(player);
    fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: { amount: -50 } }] });
    fake.replyChat({ text: 'You cannot afford that.' });
    await c.send('chatMessage', { message: 'Buy the sword' });
    const toolMessage = fake.chatRequests()[1]!.body.messages.find((m: any) => m.role === 'tool');
    expect(String(toolMessage.content)).toContain('insufficient_funds');
    expect((await t.api('GET', '/api/user/profile', { token: player.accessToken })).body.energy_coins).toBe(
      5,
    );
    c.socket.close();
  });

  it('lets a director choose between two NPCs in one structured call', async () => {
    const mira = await t.deps.services.characters.createNpc({ name: 'Mira', description: 'a blacksmith' });
    const tomas = await t.deps.services.characters.createNpc({ name: 'Tomas', description: 'a bard' });
    const conv = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'tavern', npcUserIds: [mira.id, tomas.id] },
    });
    const c = await client(alice);
    fake.replyChat({
      text: JSON.stringify({
        responses: [
          { npcUserId: mira.id, text: 'Need a blade?' },
          { npcUserId: tomas.id, text: 'A song for you!' },
        ],
        choices: ['Yes please'],
      }),
    });
    const { events } = await c.send('chatMessage', {
      message: 'Hello everyone',
      conversationId: conv.body.id,
    });
    const responses = events.filter((e) => e.name === 'assistantResponse').map((e) => e.payload);
    expect(responses.map((r) => [r.npcName, r.text])).toEqual([
      ['Mira', 'Need a blade?'],
      ['Tomas', 'A song for you!'],
    ]);
    expect(fake.chatRequests()).toHaveLength(1);
    c.socket.close();
  });

  it('reports a model failure as chatError with the ids, keeps the message, and a retry succeeds once', async () => {
    const c = await client(alice);
    fake.failNext('chat', { status: 500, times: 5 });
    const failed = await c.send('chatMessage', { message: 'Are you there?', clientMessageId: 'fail-1' });
    expect(failed.ack).toMatchObject({ ok: false, error: { code: 'model_unavailable', status: 503 } });
    const error = failed.events.find((e) => e.name === 'chatError')!.payload;
    expect(error).toMatchObject({ code: 'model_unavailable', clientMessageId: 'fail-1' });
    expect(typeof error.conversationId).toBe('number');
    const stored = await t.deps.db
      .selectFrom('chat_messages')
      .select(['status'])
      .where('client_message_id', '=', 'fail-1')
      .execute();
    expect(stored).toEqual([{ status: 'failed' }]);

    fake.reset();
    fake.replyChat({ text: 'Yes, I am here.' });
    const retry = await c.send('chatMessage', { message: 'Are you there?', clientMessageId: 'fail-1' });
    expect(retry.ack.ok).toBe(true);
    const rows = await t.deps.db
      .selectFrom('chat_messages')
      .select(['status'])
      .where('client_message_id', '=', 'fail-1')
      .execute();
    expect(rows).toEqual([{ status: 'answered' }]);
    c.socket.close();
  });

  it('rejects bad payloads with chatError validation_failed and stores nothing', async () => {
    const user = await createUser(t);
    const c = await client(user);
    for (const payload of [
      {},
      { message: '' },
      { message: 'x'.repeat(9000) },
      { message: 'hi', conversationId: 'abc' },
      { message: 'hi', imageBase64Array: ['a', 'b', 'c', 'd', 'e'] },
    ]) {
      const { ack } = await c.sendInvalid('chatMessage', payload);
      expect(ack).toMatchObject({ ok: false, error: { code: 'validation_failed', status: 400 } });
      expect(Array.isArray(ack.error.errors)).toBe(true);
    }
    const stored = await t.deps.db
      .selectFrom('chat_messages')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    expect(stored).toHaveLength(0);
    expect(fake.chatRequests()).toHaveLength(0);
    c.socket.close();
  });

  it("answers 404 for another user's conversation", async () => {
    const conv = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'mine' },
    });
    const bob = await createUser(t);
    const c = await client(bob);
    const { ack } = await c.send('chatMessage', { message: 'sneaky', conversationId: conv.body.id });
    expect(ack).toMatchObject({ ok: false, error: { code: 'not_found' } });
    c.socket.close();
  });

  it('refuses attachment URLs that point inside (SSRF) before anything is stored', async () => {
    const user = await createUser(t);
    const c = await client(user);
    for (const url of [
      'http://127.0.0.1:1/x.png',
      'http://169.254.169.254/latest/meta-data',
      'http://localhost/a.png',
      'http://[::1]/a.png',
      'http://10.0.0.5/a.png',
      'file:///etc/passwd',
      'ftp://example.com/a.png',
    ]) {
      const { ack } = await c.send('chatMessage', { message: 'look at this', attachmentUrls: [url] });
      expect(ack.ok, url).toBe(false);
      expect(ack.error.code).toBe('validation_failed');
    }
    expect(
      await t.deps.db.selectFrom('chat_messages').select('id').where('user_id', '=', user.id).execute(),
    ).toHaveLength(0);
    c.socket.close();
  });

  it('describes an attached image in the background and stores it as a vision_analysis memory', async () => {
    const user = await createUser(t);
    const c = await client(user);
    // A 1×1 PNG.
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    // The vision job may call the model before or after the turn does.
    const hasImage = (body: unknown) => JSON.stringify(body).includes('image_url');
    fake.replyChat({ text: 'Nice picture.', when: (body) => !hasImage(body) });
    fake.replyChat({ text: 'A single white pixel.', when: hasImage });
    const { ack } = await c.send('chatMessage', { message: 'What is this?', imageBase64Array: [png] });
    expect(ack.ok).toBe(true);
    await t.deps.jobs.drain(15_000);
    const memory = await t.deps.db
      .selectFrom('memories')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('source', '=', 'vision_analysis')
      .executeTakeFirst();
    expect(memory?.content).toBe('A single white pixel.');
    expect(memory?.conversation_id).toBe(ack.conversationId);
    const visionCall = fake.chatRequests().find((r) => JSON.stringify(r.body).includes('image_url'));
    expect(visionCall).toBeDefined();
    c.socket.close();
  });

  it('drops the vision job of an uploaded image deleted before it ran, without retrying it', async () => {
    const user = await createUser(t);
    const failedBefore = (await t.deps.jobs.status()).queues.find((q) => q.name === VISION_JOB)!.failed;
    await t.deps.jobs.enqueue(t.deps.db, VISION_JOB, {
      userId: user.id,
      conversationId: (await t.deps.services.conversations.resolve(user.id, undefined)).id,
      messageId: 1,
      image: { kind: 'upload', uploadContextId: '00000000-0000-4000-8000-000000000000', fileId: 1 },
    });
    await t.deps.jobs.drain(15_000);
    expect((await t.deps.jobs.status()).queues.find((q) => q.name === VISION_JOB)!.failed).toBe(failedBefore);
    expect(fake.chatRequests().filter((r) => JSON.stringify(r.body).includes('image_url'))).toHaveLength(0);
  });
});
