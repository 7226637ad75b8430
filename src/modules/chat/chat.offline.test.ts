// With no model server the assistant still answers from what it remembers: a fact told in one
// conversation is quoted back, with its date, when asked in another; a question about nothing it
// remembers gets a plain "I don't remember". On both databases (PGlite, and PostgreSQL with
// DATABASE_URL).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/eventually.js';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { chatClient } from './chat.fixtures.js';

let t: TestApp;
let ada: TestUser;

beforeAll(async () => {
  t = await createTestApp({ CHAT_RATE_LIMIT: '1000' });
  ada = await createUser(t, 'public', { name: 'Ada' });
});
afterAll(() => t.close());

/** One turn in a new conversation (as the CLI's /new starts one), on a socket of its own. */
async function say(message: string) {
  const conversation = await t.api('POST', '/api/conversations', { token: ada.accessToken, body: {} });
  expect(conversation.status).toBe(201);
  const c = await chatClient(t, ada);
  const { events } = await c.send('chatMessage', { message, conversationId: conversation.body.id });
  c.socket.close();
  const response = events.find((e) => e.name === 'assistantResponse')?.payload as
    { text: string; conversationId: number } | undefined;
  if (!response) throw new Error(`no response: ${JSON.stringify(events.map((e) => e.name))}`);
  return response;
}

describe('the offline assistant', () => {
  it('quotes a fact told in one conversation when asked about it in another', async () => {
    const told = await say('My horse is called Blaze and he is twelve.');
    expect(told.text).toBe("Thank you, I'll remember that.");
    // The exchange becomes a memory once the reply is sent.
    const stored = await eventually(async () => {
      const r = await sql<{ created_at: Date }>`
        select created_at from memories where user_id = ${ada.id} and content like 'Ada: My horse%'`.execute(
        t.deps.db,
      );
      return r.rows[0] ?? false;
    });
    const date = stored.created_at.toLocaleDateString('en-GB', {
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      timeZone: 'UTC',
    });

    const asked = await say('What is the name of my horse?');
    expect(asked.conversationId).not.toBe(told.conversationId);
    expect(asked.text).toBe(
      `Here is what I remember. On ${date}, Ada said: "My horse is called Blaze and he is twelve."`,
    );
  });

  it('says plainly that it does not remember what it was never told', async () => {
    const asked = await say('What is the name of my cat?');
    expect(asked.text).toBe("I don't remember anything about that yet. Could you tell me?");
    // A question answered with nothing leaves no memory (the turn ends after its exchange is
    // handled); asked again, the answer is the same.
    const r = await sql<{ n: number }>`
      select count(*)::int as n from memories where user_id = ${ada.id} and content like '%my cat%'`.execute(
      t.deps.db,
    );
    expect(r.rows[0]!.n).toBe(0);
    expect((await say('What is the name of my cat?')).text).toBe(
      "I don't remember anything about that yet. Could you tell me?",
    );
  });
});
