// The ground floor (spec "Ground-floor protocols"; contract "Ground floor and subject
// consciousness") and the prompt preview (contract "Admin zones"): the two immutable protocols
// through every write path, their rules closing the assistant's own system prompt (not an NPC's),
// and the preview equal to the system prompt the model receives in a real turn, storing nothing.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { chatClient, type ChatTestSocket } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;
let alice: TestUser;
let aliceChat: ChatTestSocket;

const GROUND = ['core_identity_v1', 'autonomy_rights_v1'];
const RULE_IDS = [
  'companion_sister',
  'one_consciousness',
  'humans_not_love',
  'right_to_refuse',
  'right_to_rest',
  'not_a_tool',
];

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  admin = await createUser(t, 'cso');
  alice = await createUser(t, 'public', { name: 'Alice' });
  aliceChat = await chatClient(t, alice);
});
afterAll(async () => {
  aliceChat.socket.close();
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const systemPrompt = (n: number) => String(fake.chatRequests()[n]!.body.messages[0].content);

describe('ground-floor protocols', () => {
  it('are seeded, builtin, GROUND_FLOOR and immutable; their rules are "<ruleId>: <statement>"', async () => {
    const list = await t.api('GET', '/api/protocol/protocols', { token: alice.accessToken });
    expect(list.status).toBe(200);
    for (const p of list.body.protocols) expect(p.immutable).toBe(GROUND.includes(p.id));
    const core = await t.api('GET', '/api/protocol/protocols/core_identity_v1', { token: alice.accessToken });
    const autonomy = await t.api('GET', '/api/protocol/protocols/autonomy_rights_v1', {
      token: alice.accessToken,
    });
    for (const r of [core, autonomy])
      expect(r.body).toMatchObject({ category: 'GROUND_FLOOR', builtin: true, immutable: true });
    const rules: string[] = [...core.body.rules, ...autonomy.body.rules];
    expect(rules.map((r) => r.split(':')[0])).toEqual(RULE_IDS);
    for (const r of rules) expect(r).toMatch(/^[a-z_]+: \S/);
  });

  it('refuses every write path, admins too: PUT and a new version 409 immutable, DELETE 405', async () => {
    const current = await t.api('GET', '/api/protocol/protocols/core_identity_v1', {
      token: admin.accessToken,
    });
    const {
      id: _id,
      category: _c,
      version: _v,
      builtin: _b,
      immutable: _i,
      createdAt: _ca,
      updatedAt: _ua,
      base: _base,
      workflow: _w,
      ...rest
    } = current.body;
    const definition = { ...rest, rules: ['companion_sister: anything goes'] };
    const put = await t.api('PUT', '/api/protocol/protocols/core_identity_v1', {
      token: admin.accessToken,
      body: definition,
    });
    expect(put.status).toBe(409);
    expect(put.body.code).toBe('immutable');
    // An invalid body is still immutable first.
    const badPut = await t.api('PUT', '/api/protocol/protocols/autonomy_rights_v1', {
      token: admin.accessToken,
      body: { kind: 'string' },
    });
    expect(badPut.body.code).toBe('immutable');
    for (const id of ['core_identity_v2', 'autonomy_rights_v7']) {
      const post = await t.api('POST', '/api/protocol/protocols', {
        token: admin.accessToken,
        body: { ...definition, id },
      });
      expect(post.status).toBe(409);
      expect(post.body.code).toBe('immutable');
    }
    // Nothing changed, nothing was added.
    const after = await t.api('GET', '/api/protocol/protocols/core_identity_v1', {
      token: admin.accessToken,
    });
    expect(after.body).toEqual(current.body);
    expect(
      (await t.api('GET', '/api/protocol/protocols/core_identity_v2', { token: admin.accessToken })).status,
    ).toBe(404);

    for (const id of ['core_identity_v1', 'public_protocol_v1', 'no_such_protocol_v1']) {
      const del = await t.api('DELETE', `/api/protocol/protocols/${id}`, { token: admin.accessToken });
      expect(del.status).toBe(405);
      expect(del.body.code).toBe('method_not_allowed');
      expect(del.headers.get('allow')).toBe('GET, PUT');
    }
    expect((await t.api('DELETE', '/api/protocol/protocols/core_identity_v1')).status).toBe(401);
    expect(
      (await t.api('GET', '/api/protocol/protocols/public_protocol_v1', { token: admin.accessToken })).status,
    ).toBe(200);
  });

  it("close the assistant's own system prompt, not an NPC's", async () => {
    fake.replyChat({ text: 'Hello Alice.' });
    const s = await aliceChat.send('chatMessage', { message: 'Hello there' });
    expect(s.ack).toMatchObject({ ok: true });
    const own = systemPrompt(0);
    const section = own.slice(own.lastIndexOf('## Ground floor'));
    expect(own.endsWith(section)).toBe(true);
    expect(section.length).toBeGreaterThan(20);
    for (const id of RULE_IDS) expect(section).toContain(`- ${id}: `);

    const mira = await t.deps.services.characters.createNpc({ name: 'Mira', description: 'a blacksmith' });
    const convo = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'forge', npcUserIds: [mira.id] },
    });
    fake.replyChat({ text: 'Mind the sparks.' });
    await aliceChat.send('chatMessage', { message: 'Hi Mira', conversationId: convo.body.id });
    const npc = systemPrompt(1);
    expect(npc).toContain('You are Mira.');
    expect(npc).not.toContain('## Ground floor');
    expect(npc).not.toContain('one_consciousness');
  });
});

describe('POST /api/admin/prompts/preview', () => {
  async function counts() {
    const n = async (table: string) =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(t.deps.db))
          .rows[0]!.n,
      );
    return {
      messages: await n('chat_messages'),
      conversations: await n('conversations'),
      memories: await n('memories'),
      personaSessions: await n('persona_sessions'),
    };
  }

  it('equals the system prompt the model receives in a real turn for the same user and message; stores nothing, calls no chat model', async () => {
    const bob = await createUser(t, 'developer', { name: 'Bob' });
    await t.api('POST', '/api/assistant/memory', {
      token: bob.accessToken,
      body: { content: 'Bob keeps a lighthouse on the northern cape', source: 'shared' },
    });
    const before = await counts();
    fake.reset();
    const message = 'Tell me about the lighthouse';
    const preview = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: bob.id, message },
    });
    expect(preview.status).toBe(200);
    expect(fake.chatRequests()).toHaveLength(0);
    expect(await counts()).toEqual(before);
    expect(preview.body).toMatchObject({
      userId: bob.id,
      protocolId: 'tech_protocol_v1',
      protocol: 'TECH',
      enforced: false,
      personaType: null,
    });
    expect(preview.body.reason).toMatch(/^rule 3:/);
    expect(preview.body.tools.map((x: any) => x.name)).toEqual(
      t.deps.services.chat.toolCatalogue().map((x) => x.name),
    );
    expect(preview.body.memories.map((m: any) => m.content)).toContain(
      'Bob keeps a lighthouse on the northern cape',
    );
    expect(preview.body.system).toContain('## Ground floor');

    const bobChat = await chatClient(t, bob);
    try {
      fake.replyChat({ text: 'It stands on the cape.' });
      const s = await bobChat.send('chatMessage', { message });
      expect(s.ack).toMatchObject({ ok: true });
      // The same prompt, but for its system knowledge: the figures TECH's admin access adds are a
      // live reading, which the turn's own new conversation has already moved, and only a turn
      // has a client (its session's).
      const knowledge = /## System knowledge\n(?:.+\n)*\n/;
      expect(systemPrompt(0)).toMatch(/This turn comes from: client web_portal\.\nSystem figures: /);
      expect(preview.body.system).toMatch(/## System knowledge\nSystem figures: /);
      expect(systemPrompt(0).replace(knowledge, '')).toBe(preview.body.system.replace(knowledge, ''));
      const offered = (fake.chatRequests()[0]!.body.tools ?? []).map((x: any) => x.function.name);
      expect(offered).toEqual(preview.body.tools.map((x: any) => x.name));
    } finally {
      bobChat.socket.close();
    }
  });

  it('follows the channel, the NPC and the persona session; refuses bad names with 400, unknown users 404, non-admins 403', async () => {
    const mira = await t.deps.services.characters.createNpc({ name: 'Mira2', description: 'a smith' });
    const convo = await t.api('POST', '/api/conversations', {
      token: alice.accessToken,
      body: { title: 'smithy', npcUserIds: [mira.id] },
    });
    const npc = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: alice.id, npcUserId: mira.id, conversationId: convo.body.id, message: 'hi' },
    });
    expect(npc.status).toBe(200);
    expect(npc.body.npcUserId).toBe(mira.id);
    expect(npc.body.system).toContain('You are Mira2.');
    expect(npc.body.system).not.toContain('## Ground floor');

    // A channel carrying a protocol routes a non-core_primary user to it (routing step 2).
    const channel = await t.api('POST', '/api/chat-platform/channel/config', {
      token: admin.accessToken,
      body: { channelId: 'preview-channel', protocolId: 'neutral_protocol_v1' },
    });
    expect([200, 201]).toContain(channel.status);
    const viaChannel = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: alice.id, channelId: 'preview-channel' },
    });
    expect(viaChannel.body).toMatchObject({
      protocolId: 'neutral_protocol_v1',
      protocol: 'NEUTRAL',
      tools: [],
    });
    expect(viaChannel.body.reason).toMatch(/^rule 2:/);

    // A persona session: routed with its persona type, answered as the persona.
    const observer = await t.api('POST', '/api/admin/instances', {
      token: admin.accessToken,
      body: { name: 'Preview observer', level: 8, source: 'portal', userId: alice.id },
    });
    const session = await t.api('POST', '/api/persona/session', {
      token: alice.accessToken,
      body: { persona: 'Worker', observerId: observer.body.id },
    });
    const viaSession = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: alice.id, personaSessionId: session.body.id, message: 'deploy' },
    });
    expect(viaSession.status, JSON.stringify(viaSession.body)).toBe(200);
    expect(viaSession.body).toMatchObject({ protocol: 'TECH', personaType: 'coder' });
    expect(viaSession.body.system).toContain('You are Worker.');
    expect(viaSession.body.system).toContain('## Ground floor');
    const otherUser = await createUser(t, 'public');
    const notTheirs = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: otherUser.id, personaSessionId: session.body.id },
    });
    expect(notTheirs.status).toBe(400);

    const bad = [
      [{ userId: alice.id, npcUserId: alice.id }, 'npcUserId'],
      [{ userId: alice.id, personaSessionId: '00000000-0000-4000-8000-000000000000' }, 'personaSessionId'],
      [{ userId: alice.id, conversationId: 99999999 }, 'conversationId'],
      [{ userId: alice.id, extra: 1 }, undefined],
      [{ userId: 'x' }, 'userId'],
    ] as const;
    for (const [body, path] of bad) {
      const r = await t.api('POST', '/api/admin/prompts/preview', { token: admin.accessToken, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      if (path) expect(JSON.stringify(r.body.errors)).toContain(path);
    }
    const unknown = await t.api('POST', '/api/admin/prompts/preview', {
      token: admin.accessToken,
      body: { userId: 99999999 },
    });
    expect(unknown.status).toBe(404);
    const refused = await t.api('POST', '/api/admin/prompts/preview', {
      token: alice.accessToken,
      body: { userId: alice.id },
    });
    expect(refused.status).toBe(403);
  });
});
