// The typed client (`assistant-platform/client`) against the real server: REST through the
// generated types, the chat and observer sockets, and the session's refresh on expiry. And the
// generated types are those of the OpenAPI document as it is (npm run client:types).
import { decodeJwt } from 'jose';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, type Tokens } from 'assistant-platform/client';
import { CLIENT_TYPES_FILE, clientTypes } from '../scripts/client-types.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createTestApp, createUser, type TestApp } from './harness.js';

let t: TestApp;
let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env());
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** An access token of the user valid for `ttl` seconds (negative: already expired), of a session
 * of theirs begun for it. */
async function tokenFor(userId: number, ttl: number): Promise<string> {
  const u = await t.deps.services.users.get(userId);
  const { accessToken } = await t.deps.services.auth.issue(u, 'web_portal');
  const sid = decodeJwt(accessToken).sid as string;
  return t.deps.tokens.sign({ id: u.id, role: u.role, name: u.name, accountType: u.account_type }, ttl, sid);
}

describe('typed client', () => {
  it('the generated REST types are those of the OpenAPI document (run npm run client:types)', async () => {
    expect(readFileSync(CLIENT_TYPES_FILE, 'utf8')).toBe(await clientTypes(t.app.swagger()));
  });

  it('registers, signs in and calls typed REST routes; errors are ApiErrors with the problem', async () => {
    const seen: (Tokens | undefined)[] = [];
    const client = createClient({ baseUrl: t.url, onTokens: (tk) => seen.push(tk) });
    const registered = await client.register('typed@example.test', 'a long password', 'Typed');
    expect(registered.user.name).toBe('Typed');
    expect(seen).toHaveLength(1);

    const profile = await client.api.GET('/api/user/profile');
    expect(profile.data).toMatchObject({ email: 'typed@example.test', role: 'carbon' });

    const created = await client.api.POST('/api/assistant/memory', {
      body: { content: 'The typed client likes lighthouses.', source: 'shared' },
    });
    expect(created.response.status).toBe(201);
    const found = await client.api.GET('/api/assistant/memory', {
      params: { query: { query: 'lighthouses', limit: 5 } },
    });
    expect(found.data!.memories.map((m) => m.id)).toContain(created.data!.id);

    const missing = await client.api.GET('/api/memories/{id}', { params: { path: { id: 999999 } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'not_found' });

    await expect(createClient({ baseUrl: t.url }).login('typed@example.test', 'wrong')).rejects.toMatchObject(
      {
        code: 'invalid_credentials',
      },
    );
    await client.logout();
    expect(client.tokens).toBeUndefined();
    expect(seen.at(-1)).toBeUndefined();
  });

  it('refreshes an expired access token and retries the request once', async () => {
    const user = await createUser(t, 'public', { name: 'Expiring' });
    const expired = await tokenFor(user.id, -60);
    const seen: Tokens[] = [];
    // No expiresAt: the client learns of the expiry from the server's token_expired.
    const client = createClient({
      baseUrl: t.url,
      tokens: { accessToken: expired, refreshToken: user.refreshToken },
      onTokens: (tk) => tk && seen.push(tk),
    });
    const created = await client.api.POST('/api/assistant/memory', {
      body: { content: 'Sent once, after a refresh.', source: 'shared' },
    });
    expect(created.response.status).toBe(201);
    expect(seen).toHaveLength(1);
    expect(client.tokens!.accessToken).not.toBe(expired);
    // The body was sent once: one memory.
    const mine = await client.api.GET('/api/memories');
    expect(mine.data!.memories.filter((m) => m.content === 'Sent once, after a refresh.')).toHaveLength(1);

    // A known expiry is refreshed before the request instead.
    client.tokens!.expiresAt = Date.now() - 1;
    await client.api.GET('/api/user/profile');
    expect(seen).toHaveLength(2);
  });

  it('ends the session when the refresh token is refused', async () => {
    const user = await createUser(t);
    const ended: unknown[] = [];
    const client = createClient({
      baseUrl: t.url,
      tokens: { accessToken: await tokenFor(user.id, -60), refreshToken: 'not-a-refresh-token' },
      onTokens: (tk) => ended.push(tk),
    });
    const res = client.api.GET('/api/user/profile');
    await expect(res).rejects.toBeInstanceOf(ApiError);
    expect(client.tokens).toBeUndefined();
    expect(ended).toEqual([undefined]);
  });

  it('chats over the typed socket: streamed deltas, the replies and the suggested replies', async () => {
    const user = await createUser(t, 'public', { name: 'Chatty' });
    const client = createClient({ baseUrl: t.url });
    await client.login(user.email, user.password);
    const chat = await client.chat();
    try {
      fake.replyChat({ text: 'Hello Chatty! <choices>["More","Stop"]</choices>' });
      let streamed = '';
      const turn = await chat.send('Hi', { onDelta: (d) => (streamed += d) });
      expect(streamed.trim()).toBe('Hello Chatty!');
      expect(turn.replies.map((r) => r.text)).toEqual(['Hello Chatty!']);
      expect(turn.choices.map((c) => c.text)).toEqual(['More', 'Stop']);

      const history = await client.api.GET('/api/assistant/history', {
        params: { query: { conversationId: turn.conversationId } },
      });
      expect(history.data!.messages.map((m) => m.text)).toEqual(['Hi', 'Hello Chatty!']);

      // A refused turn rejects with the chatError's problem.
      await expect(chat.send(' ')).rejects.toMatchObject({ code: 'validation_failed' });
    } finally {
      chat.close();
    }
  });

  it('reconnects the socket with a refreshed token when the server says token_expired', async () => {
    const user = await createUser(t);
    // Valid for two seconds: the server then sends token_expired and disconnects.
    const client = createClient({
      baseUrl: t.url,
      tokens: { accessToken: await tokenFor(user.id, 2), refreshToken: user.refreshToken },
    });
    const chat = await client.chat();
    try {
      const first = chat.socket.id;
      await new Promise<void>((resolve) => chat.socket.once('chatError', () => resolve()));
      await new Promise<void>((resolve) => chat.socket.once('connect', () => resolve()));
      expect(chat.socket.id).not.toBe(first);
      fake.replyChat({ text: 'Still here.' });
      const turn = await chat.send('Are you there?');
      expect(turn.replies[0]!.text).toBe('Still here.');
    } finally {
      chat.close();
    }
  });

  it('watches an observer over the typed /observer socket', async () => {
    const cso = await createUser(t, 'cso');
    const client = createClient({ baseUrl: t.url });
    await client.login(cso.email, cso.password);
    const observer = await client.api.POST('/api/admin/instances', {
      body: { name: 'Typed watch', level: 8, source: 'portal', userId: cso.id },
    });
    const socket = await client.observer(observer.data!.id);
    try {
      const update = new Promise<string>((resolve) =>
        socket.on('timeline_update', (e) => resolve(e.eventType)),
      );
      await client.api.POST('/api/admin/instances', {
        body: { name: 'Typed leaf', level: 5, source: 'portal', parentInstanceId: observer.data!.id },
      });
      expect(await update).toBe('instance_created');
      await expect(client.observer(999999)).rejects.toMatchObject({ code: 'not_found' });
      // Several observers on one connection: a child observer's registration reaches it.
      const both = await client.observer([
        observer.data!.id,
        await t.deps.services.timeline.rootObserverId(),
      ]);
      try {
        const child = new Promise<number | null>((resolve) =>
          both.on('timeline_update', (e) => resolve(e.instanceId)),
        );
        const created = await client.api.POST('/api/admin/instances', {
          body: { name: 'Typed child', level: 8, source: 'portal', parentInstanceId: observer.data!.id },
        });
        expect(await child).toBe(created.data!.id);
      } finally {
        both.close();
      }
      await expect(client.observer([observer.data!.id, 999999])).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      socket.close();
    }
  });
});
