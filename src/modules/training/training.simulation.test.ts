// Simulated conversations (contract: "Training (admin)", simulation) on the real server: one
// structured call through the fake model server, the turns' order and who may speak, storage as
// messages of a new or given conversation, nothing stored on a model failure, the refusals, and
// the offline round-robin grounded in each speaker's memories.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;
let otherAdmin: TestUser;
let ids: { mara: number; olek: number; ilse: number };

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ MODEL_MAX_RETRIES: '0' }));
  [admin, otherAdmin] = await Promise.all([createUser(t, 'cso'), createUser(t, 'cso')]);
  const c = t.deps.services.characters;
  ids = {
    mara: (await c.createNpc({ name: 'Mara', description: 'the lighthouse keeper' })).id,
    olek: (await c.createNpc({ name: 'Olek', description: 'a fisherman' })).id,
    ilse: (await c.createNpc({ name: 'Ilse', description: 'the harbour master' })).id,
  };
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const simulate = (body: unknown, token = admin.accessToken) =>
  t.api('POST', '/api/training/simulation', { token, body });

const storedMessages = (conversationId: number) =>
  t.deps.db
    .selectFrom('chat_messages')
    .select(['id', 'role', 'npc_user_id', 'text', 'metadata', 'user_id'])
    .where('conversation_id', '=', conversationId)
    .orderBy('id')
    .execute();

describe('simulation', () => {
  it('one structured call; the initiator first, strangers dropped, at most `turns`; stored as messages', async () => {
    fake.reset();
    const { mara, olek, ilse } = ids;
    fake.replyChat({
      text: JSON.stringify({
        turns: [
          { npcUserId: ilse, text: 'Before my turn.' },
          { npcUserId: olek, text: 'The nets are torn.' },
          { npcUserId: 424242, text: 'I am not here.' },
          { npcUserId: mara, text: 'Then mend them before the storm.' },
          { npcUserId: ilse, text: 'The harbour closes at dusk.' },
          { npcUserId: olek, text: 'One turn too many.' },
        ],
      }),
    });
    const r = await simulate({
      initiatorId: olek,
      topic: 'The coming storm',
      turns: 3,
      participantIds: [mara, olek, ilse],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ topic: 'The coming storm', offline: false });
    expect(r.body.turns.map((x: any) => [x.index, x.npcUserId, x.npcName, x.text])).toEqual([
      [0, olek, 'Olek', 'The nets are torn.'],
      [1, mara, 'Mara', 'Then mend them before the storm.'],
      [2, ilse, 'Ilse', 'The harbour closes at dusk.'],
    ]);

    const calls = fake.chatRequests();
    expect(calls).toHaveLength(1);
    const prompt = JSON.stringify(calls[0]!.body.messages);
    for (const name of [
      'Mara',
      'Olek',
      'Ilse',
      'The coming storm',
      'Olek (id ' + olek + ') speaks first',
      'Write exactly 3 turns',
    ])
      expect(prompt).toContain(name);
    await t.deps.models.flush();
    const recorded = await t.deps.db
      .selectFrom('model_calls')
      .select('purpose')
      .where('purpose', '=', 'training.simulation')
      .execute();
    expect(recorded).toHaveLength(1);

    // A new conversation of the caller's, with the participants; the turns as assistant messages.
    const conv = (
      await t.api('GET', '/api/conversations', { token: admin.accessToken })
    ).body.conversations.find((c: any) => c.id === r.body.conversationId);
    expect(conv.npcUserIds.sort()).toEqual([mara, olek, ilse].sort());
    const stored = await storedMessages(r.body.conversationId);
    expect(stored.map((m) => [m.id, m.role, m.npc_user_id, m.text, m.metadata, m.user_id])).toEqual(
      r.body.turns.map((x: any) => [
        x.messageId,
        'assistant',
        x.npcUserId,
        x.text,
        { simulationId: r.body.simulationId, index: x.index },
        admin.id,
      ]),
    );
    const history = await t.api('GET', `/api/assistant/history?conversationId=${r.body.conversationId}`, {
      token: admin.accessToken,
    });
    expect(history.body.messages.map((m: any) => m.npcUserId)).toEqual([olek, mara, ilse]);
  });

  it('a given conversation of the caller is used; another user’s is 404 and costs no model call', async () => {
    fake.reset();
    const { mara, olek } = ids;
    const mine = await t.api('POST', '/api/conversations', {
      token: admin.accessToken,
      body: { title: 'Mine' },
    });
    const theirs = await t.api('POST', '/api/conversations', { token: otherAdmin.accessToken, body: {} });
    const refused = await simulate({
      conversationId: theirs.body.id,
      initiatorId: mara,
      topic: 'Tea',
      participantIds: [mara, olek],
    });
    expect(refused.status).toBe(404);
    expect(fake.chatRequests()).toHaveLength(0);

    fake.replyChat({
      text: `{"turns":[{"npcUserId":${mara},"text":"Tea?"},{"npcUserId":${olek},"text":"Please."}]}`,
    });
    const r = await simulate({
      conversationId: mine.body.id,
      initiatorId: mara,
      topic: 'Tea',
      participantIds: [mara, olek],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.conversationId).toBe(mine.body.id);
    expect((await storedMessages(mine.body.id)).map((m) => m.text)).toEqual(['Tea?', 'Please.']);
  });

  it('a model failure is 503 and stores nothing', async () => {
    fake.reset();
    const { mara, olek } = ids;
    const before = (await t.api('GET', '/api/conversations?limit=100', { token: admin.accessToken })).body
      .total;
    fake.failNext('chat', { status: 500 });
    const failed = await simulate({ initiatorId: mara, topic: 'Fog', participantIds: [mara, olek] });
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe('model_unavailable');
    // An answer without usable turns counts as a failure too.
    fake.replyChat({ text: 'I would rather not.' });
    const unusable = await simulate({ initiatorId: mara, topic: 'Fog', participantIds: [mara, olek] });
    expect(unusable.status).toBe(503);
    const after = (await t.api('GET', '/api/conversations?limit=100', { token: admin.accessToken })).body
      .total;
    expect(after).toBe(before);
  });

  it('refuses bad input: the initiator not taking part, repeated or non-character participants, too many turns', async () => {
    const { mara, olek } = ids;
    const player = await createUser(t, 'public');
    const cases: [unknown, string][] = [
      [{ initiatorId: mara, topic: 'x', participantIds: [olek, ids.ilse] }, 'body.participantIds'],
      [{ initiatorId: mara, topic: 'x', participantIds: [mara, mara] }, 'body.participantIds'],
      [{ initiatorId: mara, topic: 'x', participantIds: [mara] }, 'body.participantIds'],
      [{ initiatorId: mara, topic: 'x', participantIds: [mara, player.id] }, 'body.participantIds.1'],
      [{ initiatorId: mara, topic: 'x', turns: 21, participantIds: [mara, olek] }, 'body.turns'],
      [{ initiatorId: mara, topic: 'x'.repeat(501), participantIds: [mara, olek] }, 'body.topic'],
    ];
    for (const [body, path] of cases) {
      const r = await simulate(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.map((e: any) => e.path)).toContain(path);
    }
  });
});

describe('offline simulation', () => {
  it('round-robin from the initiator, each line the speaker’s grounded offline answer', async () => {
    const off = await createTestApp();
    try {
      const a = await createUser(off, 'cso');
      const c = off.deps.services.characters;
      const mara = (await c.createNpc({ name: 'Mara', description: '' })).id;
      const olek = (await c.createNpc({ name: 'Olek', description: '' })).id;
      const ilse = (await c.createNpc({ name: 'Ilse', description: '' })).id;
      await off.api('POST', '/api/training/ingest-text', {
        token: a.accessToken,
        body: { npcUserId: mara, text: 'The lighthouse lamp burns whale oil every night.' },
      });
      const r = await off.api('POST', '/api/training/simulation', {
        token: a.accessToken,
        body: {
          initiatorId: olek,
          topic: 'the lighthouse lamp',
          turns: 5,
          participantIds: [mara, olek, ilse],
        },
      });
      expect(r.status, r.text).toBe(201);
      expect(r.body.offline).toBe(true);
      expect(r.body.turns.map((x: any) => x.npcUserId)).toEqual([olek, mara, ilse, olek, mara]);
      const line = (id: number) => r.body.turns.find((x: any) => x.npcUserId === id).text;
      expect(line(mara)).toContain('The lighthouse lamp burns whale oil every night.');
      expect(line(olek)).not.toContain('whale oil');
      const history = await off.api('GET', `/api/assistant/history?conversationId=${r.body.conversationId}`, {
        token: a.accessToken,
      });
      expect(history.body.messages.map((m: any) => m.text)).toEqual(r.body.turns.map((x: any) => x.text));
    } finally {
      await off.close();
    }
  });
});
