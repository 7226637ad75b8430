// Reconciling with a model (issue 55): with MODEL_BASE_URL set, a new exchange that resembles what
// is stored sends a memory.reconcile job; the model (the fake model server) decides UPDATE,
// DELETE or NONE over the memories it was shown. An update supersedes the stored memory (marked,
// chunks gone, still listed), a duplicate is superseded by the one stored, and an answer that does
// not parse or names memories it was not shown changes nothing. On both databases.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { applyAnswer } from './memory.reconcile.js';

let fake: FakeModelServer;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(
    fake.env({ CHAT_RATE_LIMIT: '1000', MODEL_MAX_RETRIES: '0', MEMORY_RECONCILE: 'model' }),
  );
});
afterAll(async () => {
  closeSockets();
  await t.close();
  await fake.close();
});

const isReconcile = (body: any) =>
  body.messages.some((m: any) => m.role === 'system' && m.content.includes("player's memory tidy"));

/** One turn, answered with an acknowledgement; then every job done (the reconciliation). */
async function tell(user: TestUser, message: string, reconcile?: unknown) {
  fake.replyChat({ text: "Thank you, I'll remember that.", when: (b) => !isReconcile(b) });
  if (reconcile !== undefined)
    fake.replyChat({
      text: typeof reconcile === 'string' ? reconcile : JSON.stringify(reconcile),
      when: isReconcile,
    });
  const conversation = await t.api('POST', '/api/conversations', { token: user.accessToken, body: {} });
  const c = await connectSocket(t.url, { auth: { token: user.accessToken } });
  await c.send('chatMessage', { message, conversationId: conversation.body.id });
  c.socket.close();
  await t.deps.jobs.drain(20_000);
}

async function memories(user: TestUser): Promise<any[]> {
  const r = await t.api('GET', '/api/memories?limit=100', { token: user.accessToken });
  return r.body.memories;
}
const byContent = (all: any[], start: string) => all.find((m) => m.content.startsWith(start));
const chunks = async (id: number) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from memory_chunks where memory_id = ${id}`.execute(
      t.deps.db,
    )
  ).rows[0]!.n;

describe('reconciling with a model', () => {
  it('an update supersedes the stored memory, keeping what still holds', async () => {
    fake.reset();
    const sam = await createUser(t, 'public', { name: 'Sam' });
    await tell(sam, 'My horse is called Blaze and I ride him to the coast.');
    // Nothing like it was stored: no reconciliation.
    expect(fake.chatRequests().filter((r) => isReconcile(r.body))).toHaveLength(0);
    const blaze = byContent(await memories(sam), 'Sam: My horse is called Blaze');

    await tell(sam, 'My horse is called Storm now.', {
      facts: [
        {
          fact: 'The horse is called Storm',
          event: 'UPDATE',
          id: blaze.id,
          keep: 'Sam rides his horse to the coast.',
        },
      ],
    });
    const [request] = fake.chatRequests().filter((r) => isReconcile(r.body));
    const shown = JSON.parse(request!.body.messages.find((m: any) => m.role === 'user').content);
    expect(shown).toEqual({
      newExchange: 'Sam: My horse is called Storm now.',
      stored: [{ id: blaze.id, text: blaze.content }],
    });
    const all = await memories(sam);
    const storm = byContent(all, 'Sam: My horse is called Storm');
    const kept = byContent(all, 'Sam rides his horse');
    expect(byContent(all, 'Sam: My horse is called Blaze').metadata).toMatchObject({
      supersededBy: storm.id,
      supersededReason: 'updated',
    });
    expect(kept.metadata).toMatchObject({ remainderOf: blaze.id, npcUserId: blaze.metadata.npcUserId });
    expect(await chunks(blaze.id)).toBe(0);
    expect(await chunks(kept.id)).toBeGreaterThan(0);
    const search = await t.api('GET', '/api/assistant/memory?query=horse&limit=10', {
      token: sam.accessToken,
    });
    expect(search.body.memories.map((m: any) => m.id)).not.toContain(blaze.id);
  });

  it('a duplicate is superseded by the stored one; a delete marks the stored one', async () => {
    fake.reset();
    const ann = await createUser(t, 'public', { name: 'Ann' });
    await tell(ann, 'I work at the bakery on Rope Street every morning.');
    const bakery = byContent(await memories(ann), 'Ann: I work at the bakery');
    await tell(ann, 'Most mornings you will find me baking bread at that Rope Street bakery.', {
      facts: [{ fact: 'Ann works at the bakery', event: 'NONE', id: bakery.id }],
    });
    const again = byContent(await memories(ann), 'Ann: Most mornings');
    expect(again.metadata).toMatchObject({ supersededBy: bakery.id, supersededReason: 'duplicate' });
    expect(await chunks(again.id)).toBe(0);
    expect((await memories(ann)).find((m) => m.id === bakery.id).metadata.supersededBy).toBeUndefined();

    await tell(ann, 'I no longer work at the bakery on Rope Street.', {
      facts: [{ fact: 'Ann does not work at the bakery', event: 'DELETE', id: bakery.id }],
    });
    const quit = byContent(await memories(ann), 'Ann: I no longer');
    expect((await memories(ann)).find((m) => m.id === bakery.id).metadata).toMatchObject({
      supersededBy: quit.id,
      supersededReason: 'deleted',
    });
  });

  it('an answer that does not parse, or names memories it was not shown, changes nothing', async () => {
    fake.reset();
    const bo = await createUser(t, 'public', { name: 'Bo' });
    await tell(bo, 'My boat is called Marlin and she is blue.');
    await tell(bo, 'My boat is called Osprey and she is green.', 'I would rather not say.');
    await tell(bo, 'My boat is called Heron and she is red.', {
      facts: [
        { fact: 'x', event: 'DELETE', id: 999_999_999 },
        { fact: 'y', event: 'SHOUT', id: 1 },
      ],
    });
    await tell(bo, 'My boat is called Tern and she is white.', {
      facts: [{ fact: 'x', event: 'UPDATE', id: 999_999_999 }],
    });
    expect(fake.chatRequests().filter((r) => isReconcile(r.body))).toHaveLength(3);
    const all = await memories(bo);
    expect(all).toHaveLength(4);
    for (const m of all) expect(m.metadata.supersededBy).toBeUndefined();
  });
});

describe('an answer applied (the pure part)', () => {
  const shown = [{ id: 1 }, { id: 2 }];
  const table: [string, Parameters<typeof applyAnswer>[0], ReturnType<typeof applyAnswer>][] = [
    ['nothing', { facts: [] }, { superseded: [], deleted: [], duplicateOf: null }],
    ['an add', { facts: [{ fact: 'a', event: 'ADD' }] }, { superseded: [], deleted: [], duplicateOf: null }],
    [
      'an update with nothing kept, and a delete',
      {
        facts: [
          { fact: 'a', event: 'UPDATE', id: 1, keep: ' ' },
          { fact: 'b', event: 'DELETE', id: 2 },
        ],
      },
      { superseded: [{ id: 1, remainder: null }], deleted: [2], duplicateOf: null },
    ],
    [
      'every fact known: a duplicate',
      {
        facts: [
          { fact: 'a', event: 'NONE', id: 2 },
          { fact: 'b', event: 'NONE', id: 1 },
        ],
      },
      { superseded: [], deleted: [], duplicateOf: 2 },
    ],
    [
      'a new fact beside a known one: no duplicate',
      {
        facts: [
          { fact: 'a', event: 'NONE', id: 2 },
          { fact: 'b', event: 'ADD' },
        ],
      },
      { superseded: [], deleted: [], duplicateOf: null },
    ],
    [
      'ids not shown, and the new memory itself, are ignored',
      {
        facts: [
          { fact: 'a', event: 'UPDATE', id: 7 },
          { fact: 'b', event: 'DELETE', id: 9 },
          { fact: 'c', event: 'NONE', id: 8 },
        ],
      },
      { superseded: [], deleted: [], duplicateOf: null },
    ],
  ];
  it.each(table)('%s', (_, answer, plan) => expect(applyAnswer(answer, 9, shown)).toEqual(plan));
});
