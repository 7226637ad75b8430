// Memory hygiene offline, through the real chat turn and training (issue 55): no memory for an
// exchange that carries nothing; a fact said twice and a file trained twice stored once; a later
// "my X is Y" supersedes the earlier fact, which stays in /api/memories, marked, and leaves
// retrieval. On both databases (PGlite, and PostgreSQL with DATABASE_URL).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm } from '../../../test/documents.js';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  eventually,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';

let t: TestApp;
let sam: TestUser;

beforeAll(async () => {
  t = await createTestApp({ CHAT_RATE_LIMIT: '1000' });
  sam = await createUser(t, 'public', { name: 'Sam' });
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

/** One turn in a new conversation; the answer once its exchange was remembered (the turn's
 * `assistantIdle` comes after). */
async function say(message: string, user = sam): Promise<string> {
  const conversation = await t.api('POST', '/api/conversations', { token: user.accessToken, body: {} });
  const c = await connectSocket(t.url, { auth: { token: user.accessToken } });
  const { events } = await c.send('chatMessage', { message, conversationId: conversation.body.id });
  c.socket.close();
  const response = events.find((e) => e.name === 'assistantResponse')?.payload as
    { text: string } | undefined;
  if (!response) throw new Error(`no response: ${JSON.stringify(events.map((e) => e.name))}`);
  return response.text;
}

async function memoriesOf(user: TestUser): Promise<any[]> {
  const r = await t.api('GET', '/api/memories?limit=100', { token: user.accessToken });
  expect(r.status).toBe(200);
  return r.body.memories;
}

async function chunksOf(memoryId: number): Promise<number> {
  const r = await sql<{
    n: number;
  }>`select count(*)::int as n from memory_chunks where memory_id = ${memoryId}`.execute(t.deps.db);
  return r.rows[0]!.n;
}

describe('memory hygiene, offline', () => {
  it('keeps no memory of greetings, numbers, or questions it could not answer; a fact without its acknowledgement', async () => {
    const ann = await createUser(t, 'public', { name: 'Ann' });
    for (const m of ['hello there', '1', 'ok thanks', 'What is the name of my cat?']) await say(m, ann);
    expect(await memoriesOf(ann)).toEqual([]);
    expect(await say('My kite is called Zephyr, I fly it every Sunday.', ann)).toBe(
      "Thank you, I'll remember that.",
    );
    const [kite] = await memoriesOf(ann);
    expect(kite).toMatchObject({
      content: 'Ann: My kite is called Zephyr, I fly it every Sunday.',
      source: 'shared',
      metadata: { playerName: 'Ann', npcName: expect.any(String), npcUserId: expect.any(Number) },
    });
    expect(kite.metadata.conversationId).toEqual(expect.any(Number));
    // Asking about it quotes it back: the recap is not stored again.
    expect(await say('What is the name of my kite?', ann)).toContain('Zephyr');
    expect(await memoriesOf(ann)).toHaveLength(1);
  });

  it('stores a fact said twice once', async () => {
    const bo = await createUser(t, 'public', { name: 'Bo' });
    await say('My sister Ilse lives in Ghent and teaches the harp.', bo);
    await say('my sister ilse lives in ghent and teaches the harp!', bo);
    await say('My sister Ilse lives in Ghent and teaches harp.', bo);
    const all = await memoriesOf(bo);
    expect(all.map((m) => m.content)).toEqual(['Bo: My sister Ilse lives in Ghent and teaches the harp.']);
  });

  it('a fact is a repeat only for whoever heard it: its conversation or its character', async () => {
    const cy = await createUser(t, 'public', { name: 'Cy' });
    const olek = await t.deps.services.characters.createNpc({ name: 'Olek', description: '' });
    const wren = await t.deps.services.characters.createNpc({ name: 'Wren', description: '' });
    const conversation = async () =>
      (await t.api('POST', '/api/conversations', { token: cy.accessToken, body: {} })).body.id as number;
    const [first, second, third] = [await conversation(), await conversation(), await conversation()];
    const tell = (conversationId: number, speaker: { id: number; name: string }) =>
      t.deps.services.memory.rememberExchange({
        userId: cy.id,
        conversationId,
        playerName: 'Cy',
        speaker,
        userText: 'My boat is called Heron and it is painted green.',
        replies: [{ speakerName: speaker.name, text: "Thank you, I'll remember that." }],
        metadata: {},
      });
    await tell(first, olek);
    await tell(second, olek); // the same character heard it: a repeat
    await tell(first, wren); // the same conversation heard it: a repeat
    await tell(third, wren); // nobody who heard it: stored for Wren
    const heard = (await memoriesOf(cy)).map((m) => [m.metadata.npcName, m.conversationId]);
    expect(heard.sort()).toEqual([
      ['Olek', first],
      ['Wren', third],
    ]);
  });

  it('a later name supersedes the earlier: both listed, the earlier marked and out of retrieval', async () => {
    await say('My horse is called Blaze. My dog is called Rex.');
    await say('My horse is called Storm now that he is older.');
    const all = await memoriesOf(sam);
    const blaze = all.find((m) => m.content === 'Sam: My horse is called Blaze. My dog is called Rex.');
    const storm = all.find((m) => m.content.startsWith('Sam: My horse is called Storm'));
    const rex = all.find((m) => m.content === 'Sam: My dog is called Rex.');
    expect(blaze.metadata).toMatchObject({
      supersededBy: storm.id,
      supersededAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      supersededReason: 'superseded',
    });
    expect(storm.metadata.supersededBy).toBeUndefined();
    // What still held of the earlier memory is a memory of its own.
    expect(rex.metadata).toMatchObject({ remainderOf: blaze.id, playerName: 'Sam' });
    expect(await chunksOf(blaze.id)).toBe(0);
    expect(await chunksOf(storm.id)).toBeGreaterThan(0);

    const search = await t.api('GET', '/api/assistant/memory?query=horse%20Blaze&limit=10', {
      token: sam.accessToken,
    });
    expect(search.body.memories.map((m: any) => m.id)).not.toContain(blaze.id);
    const newest = await t.api('GET', '/api/assistant/memory?limit=50', { token: sam.accessToken });
    expect(newest.body.memories.map((m: any) => m.id)).not.toContain(blaze.id);

    const answer = await say('What is my horse called?');
    expect(answer).toContain('Storm');
    expect(answer).not.toContain('Blaze');
    expect(await say("What is my dog's name?")).toContain('Rex');

    // Its owner may take the mark off: the memory is retrievable again.
    const { supersededBy: _a, supersededAt: _b, supersededReason: _c, ...rest } = blaze.metadata;
    const patched = await t.api('PATCH', `/api/memories/${blaze.id}`, {
      token: sam.accessToken,
      body: { metadata: rest },
    });
    expect(patched.status).toBe(200);
    expect(await chunksOf(blaze.id)).toBeGreaterThan(0);
  });

  it('a file trained twice stores its beliefs once', async () => {
    const admin = await createUser(t, 'cso');
    const npc = await t.deps.services.characters.createNpc({ name: 'Olek', description: '' });
    const text = 'I keep the light burning every night.\n\nThe sea was rough that winter.';
    const train = async () => {
      const r = await postForm(
        t,
        '/api/training/ingest-file',
        admin.accessToken,
        { npcUserId: String(npc.id) },
        [{ name: 'log.txt', data: Buffer.from(text) }],
      );
      expect(r.status).toBe(202);
      return eventually(
        async () => {
          const j = await t.api('GET', `/api/training/jobs/${r.body.jobId}`, { token: admin.accessToken });
          expect(j.body.status).toBe('completed');
          return j.body;
        },
        { timeoutMs: 30_000 },
      );
    };
    await train();
    await train();
    const beliefs = await t.api('GET', `/api/admin/memories?userId=${npc.id}&source=core_belief`, {
      token: admin.accessToken,
    });
    expect(beliefs.body.memories.map((m: any) => m.content).sort()).toEqual([
      'I believe: The sea was rough that winter.',
      'I keep the light burning every night.',
    ]);
  });
});
