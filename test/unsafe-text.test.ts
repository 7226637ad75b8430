// U+0000 and lone UTF-16 surrogates in requests: refused as 400 validation_failed naming the field,
// for every route (the preValidation hook of app.ts) and for socket payloads (parseOrThrow),
// before anything reaches the database; nothing stored changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatClient } from '../src/modules/chat/chat.fixtures.js';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from './harness.js';

const NUL = 'must not contain NUL characters (U+0000)';
const SURROGATE = 'must not contain unpaired UTF-16 surrogates';

let t: TestApp;
let cso: TestUser;
let pub: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  [cso, pub] = await Promise.all([createUser(t, 'cso'), createUser(t, 'public')]);
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

function expectRefused(res: { status: number; headers: Headers; body: any }, path: string, message: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual({
    type: '/problems/validation_failed',
    title: 'Validation failed',
    status: 400,
    detail: 'The request is not valid',
    code: 'validation_failed',
    errors: [{ path, message }],
  });
}

const count = async (table: 'users' | 'instances' | 'protocols' | 'chat_platform_channels') =>
  Number(
    (
      await t.deps.db
        .selectFrom(table)
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('HTTP routes', () => {
  it('register: a NUL or a lone surrogate in name', async () => {
    const before = await count('users');
    for (const [name, message] of [
      ['Eve\u0000', NUL],
      ['Eve\uD800', SURROGATE],
    ] as const) {
      const res = await t.api('POST', '/api/auth/register', {
        body: { email: `eve-${message.length}@example.test`, password: 'correct horse battery', name },
      });
      expectRefused(res, 'body.name', message);
    }
    expect(await count('users')).toBe(before);
  });

  it('login: a NUL in email', async () => {
    const res = await t.api('POST', '/api/auth/login', {
      body: { email: `${pub.email}\u0000`, password: pub.password },
    });
    expectRefused(res, 'body.email', NUL);
    // The right credentials still sign in.
    const ok = await t.api('POST', '/api/auth/login', { body: { email: pub.email, password: pub.password } });
    expect(ok.status).toBe(200);
  });

  it('admin users: a NUL in q (querystring)', async () => {
    const res = await t.api('GET', '/api/admin/users?q=%00', { token: cso.accessToken });
    expectRefused(res, 'querystring.q', NUL);
  });

  it('chat platform: channelId in a body, a path parameter and a query', async () => {
    const before = await count('chat_platform_channels');
    expectRefused(
      await t.api('POST', '/api/chat-platform/channel/config', {
        token: cso.accessToken,
        body: { channelId: 'c\u0000', protocolId: 'tech_protocol_v1' },
      }),
      'body.channelId',
      NUL,
    );
    expectRefused(
      await t.api('POST', '/api/chat-platform/channel/config', {
        token: cso.accessToken,
        body: { channelId: '\uDC00c', protocolId: 'tech_protocol_v1' },
      }),
      'body.channelId',
      SURROGATE,
    );
    expect(await count('chat_platform_channels')).toBe(before);
    expectRefused(
      await t.api('GET', '/api/chat-platform/channel/config/a%00b', { token: pub.accessToken }),
      'params.channelId',
      NUL,
    );
    expectRefused(
      await t.api('GET', '/api/protocol/routing?channelId=%00', { token: pub.accessToken }),
      'querystring.channelId',
      NUL,
    );
  });

  it('instances: a lone surrogate inside metadata (jsonb), in a value and in a key', async () => {
    const before = await count('instances');
    expectRefused(
      await t.api('POST', '/api/admin/instances', {
        token: cso.accessToken,
        body: { name: 'Probe', level: 5, source: 'portal', metadata: { note: { deep: ['ok', '\uD800'] } } },
      }),
      'body.metadata.note.deep.1',
      SURROGATE,
    );
    expect(await count('instances')).toBe(before);

    const created = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'Clean', level: 5, source: 'portal', metadata: { note: 'kept' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    expectRefused(
      await t.api('PATCH', `/api/admin/instances/${id}`, {
        token: cso.accessToken,
        body: { metadata: { ['k\uDBFF']: 1 } },
      }),
      'body.metadata.k\uFFFD',
      `a key ${SURROGATE}`,
    );
    expectRefused(
      await t.api('PATCH', `/api/admin/instances/${id}`, {
        token: cso.accessToken,
        body: { name: 'N\u0000' },
      }),
      'body.name',
      NUL,
    );
    const after = await t.api('GET', `/api/admin/instances/${id}`, { token: cso.accessToken });
    expect(after.body).toMatchObject({ name: 'Clean', metadata: { note: 'kept' } });
  });

  it('protocols: a NUL or a lone surrogate in a template (400, not 422)', async () => {
    const definition = { kind: 'string', name: 'Probe', template: 'You are a probe.' };
    const before = await count('protocols');
    expectRefused(
      await t.api('POST', '/api/protocol/protocols', {
        token: cso.accessToken,
        body: { id: 'probe_nul_v1', ...definition, template: 'Hello\u0000' },
      }),
      'body.template',
      NUL,
    );
    expect(await count('protocols')).toBe(before);

    const created = await t.api('POST', '/api/protocol/protocols', {
      token: cso.accessToken,
      body: { id: 'probe_clean_v1', ...definition },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectRefused(
      await t.api('PUT', '/api/protocol/protocols/probe_clean_v1', {
        token: cso.accessToken,
        body: { ...definition, template: 'Bye \uD800', rules: ['fine', 'x\u0000'] },
      }),
      'body.template',
      SURROGATE,
    );
    const stored = await t.api('GET', '/api/protocol/protocols/probe_clean_v1', { token: pub.accessToken });
    expect(stored.body.template).toBe(definition.template);
  });
});

describe('Socket.IO payloads', () => {
  it('chatMessage and directNpcMessage answer chatError and the ack with validation_failed', async () => {
    const user = await createUser(t, 'public');
    const c = await chatClient(t, user);
    const stored = () =>
      t.deps.db
        .selectFrom('chat_messages')
        .innerJoin('conversations', 'conversations.id', 'chat_messages.conversation_id')
        .where('conversations.user_id', '=', user.id)
        .select('chat_messages.id')
        .execute();

    const sent = await c.send('chatMessage', { message: 'hi\u0000', clientMessageId: 'nul-1' });
    expect(sent.ack.ok).toBe(false);
    expect(sent.ack.error).toMatchObject({
      code: 'validation_failed',
      status: 400,
      clientMessageId: 'nul-1',
      errors: [{ path: 'chatMessage.message', message: NUL }],
    });
    const chatError = sent.events.find((e) => e.name === 'chatError');
    expect(chatError?.payload).toEqual(sent.ack.error);

    const surrogate = await c.send('chatMessage', {
      message: 'ok',
      preferences: { stream: true },
      clientMessageId: '\uD800',
    });
    expect(surrogate.ack.error).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'chatMessage.clientMessageId', message: SURROGATE }],
    });

    const npc = await createUser(t, 'npc');
    const direct = await c.send(
      'directNpcMessage',
      { npcUserId: npc.id, message: '\uDC00' },
      'directNpcResponse',
    );
    expect(direct.ack.error).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'directNpcMessage.message', message: SURROGATE }],
    });
    expect(await stored()).toEqual([]);
  });

  it('the observer handshake refuses a NUL in observerId with validation_failed', async () => {
    await expect(
      connectSocket(t.url, {
        namespace: '/observer',
        auth: { token: cso.accessToken, observerId: '1\u0000' },
      }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'auth.observerId', message: NUL }],
    });
  });
});
