// The OpenAI-compatible door, driven by the official `openai` package: the model list, a whole
// and a streamed completion that talk to a character and are stored, idempotent retries, and
// errors in OpenAI's shape.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';

let fake: FakeModelServer;
let t: TestApp;
let ada: TestUser;
let openai: OpenAI;
let npcId: number;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  ada = await createUser(t, 'public', { name: 'Ada' });
  openai = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: ada.accessToken, maxRetries: 0 });
  npcId = (await t.deps.services.characters.createNpc({ name: 'Mira', description: 'the blacksmith' })).id;
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** Every stored message of Ada's conversations (a character's thread or the default one). */
const stored = async () =>
  (
    await t.deps.db
      .selectFrom('chat_messages')
      .innerJoin('conversations', 'conversations.id', 'chat_messages.conversation_id')
      .select('chat_messages.text')
      .where('conversations.user_id', '=', ada.id)
      .execute()
  ).map((m) => m.text);

describe('the OpenAI door', () => {
  it('lists the assistant and each character as models', async () => {
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(['assistant', `npc:${npcId}`]));
    expect(await openai.models.retrieve(`npc:${npcId}`)).toMatchObject({
      id: `npc:${npcId}`,
      owned_by: 'Mira',
    });
  });

  it('a whole completion talks to a character, and the turn is stored', async () => {
    fake.replyChat({ text: 'The forge is hot, Ada.' });
    const answer = await openai.chat.completions.create({
      model: `npc:${npcId}`,
      messages: [
        { role: 'system', content: 'ignored: the service composes the prompt' },
        { role: 'user', content: 'Is the forge lit?' },
      ],
    });
    expect(answer.object).toBe('chat.completion');
    expect(answer.model).toBe(`npc:${npcId}`);
    expect(answer.choices[0]!.message).toMatchObject({
      role: 'assistant',
      content: 'The forge is hot, Ada.',
    });
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    const prompt = JSON.stringify(fake.chatRequests().at(-1)!.body.messages);
    expect(prompt).toContain('Mira');
    expect(prompt).not.toContain('ignored: the service composes the prompt');
    expect(await stored()).toEqual(expect.arrayContaining(['Is the forge lit?', 'The forge is hot, Ada.']));
  });

  it('a streamed completion: chunks whose text is the reply, and the turn is stored', async () => {
    fake.replyChat({ text: 'Good morning! The tide is out.' });
    const stream = await openai.chat.completions.create({
      model: 'assistant',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Good morning!' }] }],
      stream: true,
    });
    const pieces: string[] = [];
    const finishes: (string | null)[] = [];
    for await (const c of stream) {
      expect(c.object).toBe('chat.completion.chunk');
      pieces.push(c.choices[0]?.delta.content ?? '');
      finishes.push(c.choices[0]?.finish_reason ?? null);
    }
    expect(pieces.join('')).toBe('Good morning! The tide is out.');
    expect(pieces.filter(Boolean).length).toBeGreaterThan(1);
    expect(finishes.at(-1)).toBe('stop');
    expect(await stored()).toEqual(
      expect.arrayContaining(['Good morning!', 'Good morning! The tide is out.']),
    );
  });

  it('an Idempotency-Key is the clientMessageId: a retry answers from the stored reply', async () => {
    fake.replyChat({ text: 'Once only.' });
    const ask = () =>
      openai.chat.completions.create(
        { model: 'assistant', messages: [{ role: 'user', content: 'Say it once' }] },
        { headers: { 'Idempotency-Key': 'oa-1' } },
      );
    const first = await ask();
    const calls = fake.chatRequests().length;
    const again = await ask();
    expect(again.choices[0]!.message.content).toBe('Once only.');
    expect(again.id).toBe(first.id);
    expect(fake.chatRequests().length).toBe(calls);
  });

  it('errors come in OpenAI’s shape', async () => {
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => expect.fail('no error'),
        (e: unknown) => e,
      );
    const unknown = await failure(
      openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'not_found_error',
      code: 'model_not_found',
      param: 'model',
    });
    const noUser = await failure(
      openai.chat.completions.create({
        model: 'assistant',
        messages: [{ role: 'assistant', content: 'hi' }],
      }),
    );
    expect(noUser).toBeInstanceOf(OpenAI.BadRequestError);
    expect((noUser as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'messages',
      code: 'validation_failed',
    });
    const stranger = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: 'not-a-token', maxRetries: 0 });
    const denied = await failure(stranger.models.list());
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((denied as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
      type: 'authentication_error',
    });
    // A character that is none: the turn's refusal, before any chunk, as an HTTP error.
    const notNpc = await failure(
      openai.chat.completions.create({
        model: `npc:${ada.id}`,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
    );
    expect(notNpc).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
