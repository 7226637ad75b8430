// The MCP endpoint through the official SDK's own client: the tools, their answers from the same
// services as REST, and the same access rules (another user's memory is unreachable); who may
// connect (an access token, or an API key with the `mcp` scope acting as its account).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from './harness.js';

let t: TestApp;
let ada: TestUser;
let bob: TestUser;
let cso: TestUser;
const clients: Client[] = [];

beforeAll(async () => {
  t = await createTestApp();
  ada = await createUser(t, 'public', { name: 'Ada' });
  bob = await createUser(t, 'public', { name: 'Bob' });
  cso = await createUser(t, 'cso');
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.close();
});

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  clients.push(client);
  return client;
}
const as = (u: TestUser) => connect({ authorization: `Bearer ${u.accessToken}` });

/** Calls a tool; its JSON answer, or the problem object of a refusal. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { type: string; text: string }[];
  };
  return { isError: r.isError === true, value: JSON.parse(r.content[0]!.text) };
}

describe('MCP server', () => {
  it('lists the memory, timeline and inventory tools', async () => {
    const client = await as(ada);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'inventory',
      'memory_add',
      'memory_forget',
      'memory_list',
      'memory_search',
      'timeline',
    ]);
    for (const tool of tools) expect(tool.description!.length).toBeGreaterThan(20);
    expect(tools.find((tool) => tool.name === 'memory_search')!.inputSchema.required).toEqual(['query']);
  });

  it("adds, searches, lists and forgets the caller's memories, the same ones REST sees", async () => {
    const client = await as(ada);
    const added = await call(client, 'memory_add', { content: 'Ada keeps bees behind the lighthouse.' });
    expect(added.isError).toBe(false);
    expect(added.value).toMatchObject({ userId: ada.id, source: 'shared' });

    const found = await call(client, 'memory_search', { query: 'bees lighthouse' });
    expect(found.value.memories[0]).toMatchObject({
      id: added.value.id,
      content: 'Ada keeps bees behind the lighthouse.',
    });
    const listed = await call(client, 'memory_list', { limit: 5 });
    expect(listed.value.memories.map((m: any) => m.id)).toContain(added.value.id);
    expect((await t.api('GET', `/api/memories/${added.value.id}`, { token: ada.accessToken })).status).toBe(
      200,
    );

    const forgotten = await call(client, 'memory_forget', { id: added.value.id });
    expect(forgotten.value).toEqual({ forgotten: added.value.id });
    expect((await t.api('GET', `/api/memories/${added.value.id}`, { token: ada.accessToken })).status).toBe(
      404,
    );
  });

  it("memory_add meets the REST route's limits: metadata over 64 KiB is refused, nothing stored", async () => {
    const client = await as(ada);
    const big = await call(client, 'memory_add', {
      content: 'Ada hoards driftwood.',
      metadata: { notes: 'x'.repeat(500 * 1024) },
    });
    expect(big.isError).toBe(true);
    expect(big.value).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(JSON.stringify(big.value.errors)).toMatch(/at most 64 KiB/);
    const listed = await call(client, 'memory_list', { limit: 100 });
    expect(listed.value.memories.map((m: any) => m.content)).not.toContain('Ada hoards driftwood.');
  });

  it("another user's memory is unreachable: not found, never searched or listed", async () => {
    const mine = await as(ada);
    const secret = await call(mine, 'memory_add', { content: 'Ada hides the spare key under the blue pot.' });
    const other = await as(bob);

    const forget = await call(other, 'memory_forget', { id: secret.value.id });
    expect(forget.isError).toBe(true);
    expect(forget.value).toMatchObject({ code: 'not_found', status: 404 });
    const search = await call(other, 'memory_search', { query: 'spare key blue pot' });
    expect(search.value.memories.map((m: any) => m.id)).not.toContain(secret.value.id);
    const list = await call(other, 'memory_list', { limit: 100 });
    expect(list.value.memories.every((m: any) => m.userId === bob.id)).toBe(true);
    // Still there for its owner.
    expect((await t.api('GET', `/api/memories/${secret.value.id}`, { token: ada.accessToken })).status).toBe(
      200,
    );
  });

  it("reads the caller's timeline and inventory", async () => {
    const ingest = await t.api('POST', '/api/sync/ingest-event', {
      token: cso.accessToken,
      body: { userId: ada.id, eventType: 'quest_completed', eventText: 'Ada relit the lighthouse' },
    });
    expect(ingest.status).toBe(201);
    const coins = await t.api('POST', '/api/inventory/modify', {
      token: cso.accessToken,
      headers: { 'idempotency-key': 'mcp-test-coins' },
      body: { userId: ada.id, amount: 40 },
    });
    expect(coins.status).toBe(200);

    const client = await as(ada);
    const timeline = await call(client, 'timeline', { limit: 5 });
    expect(timeline.value.events[0]).toMatchObject({ userId: ada.id, eventType: 'quest_completed' });
    const inventory = await call(client, 'inventory');
    expect(inventory.value).toMatchObject({ energy_coins: 40, items: [] });
    // Bob sees his own, not Ada's.
    expect((await call(await as(bob), 'timeline')).value.events).toEqual([]);
  });

  it('admits an API key with the mcp scope as the account it belongs to, by X-API-Key or as a bearer', async () => {
    const { key } = await t.deps.services.auth.createApiKey("Ada's editor", ['mcp'], ada.id);
    const ways: Record<string, string>[] = [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }];
    for (const headers of ways) {
      const client = await connect(headers);
      const added = await call(client, 'memory_add', {
        content: `Written with a key (${Object.keys(headers)[0]})`,
      });
      expect(added.value.userId).toBe(ada.id);
    }
  });

  it('an administrator makes an mcp key for a user with the admin API', async () => {
    const made = await t.api('POST', '/api/admin/api-keys', {
      token: cso.accessToken,
      body: { name: "Bob's agent", scopes: ['mcp'], userId: bob.id },
    });
    expect(made.status).toBe(201);
    const client = await connect({ 'x-api-key': made.body.key });
    expect((await call(client, 'memory_add', { content: 'Bob likes kites.' })).value.userId).toBe(bob.id);
    const unknown = await t.api('POST', '/api/admin/api-keys', {
      token: cso.accessToken,
      body: { name: 'nobody', scopes: ['mcp'], userId: 999999 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: 'userId', message: 'no user 999999' }]);
  });

  it('refuses no credentials, a key without the scope or without an account, and a bad token', async () => {
    const refused = async (headers: Record<string, string>) => {
      const res = await fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect(await refused({})).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    const sync = await t.deps.services.auth.createApiKey('sync only', ['sync:read'], cso.id);
    expect(await refused({ 'x-api-key': sync.key })).toMatchObject({
      status: 403,
      body: { code: 'forbidden', requiredScope: 'mcp' },
    });
    const orphan = await t.deps.services.auth.createApiKey('no account', ['mcp'], null);
    expect(await refused({ 'x-api-key': orphan.key })).toMatchObject({
      status: 403,
      body: { code: 'forbidden' },
    });
    expect(await refused({ authorization: 'Bearer not-a-token' })).toMatchObject({ status: 401 });
    await expect(connect({ authorization: 'Bearer not-a-token' })).rejects.toThrow(/401/);

    const get = await fetch(`${t.url}/mcp`, { headers: { authorization: `Bearer ${ada.accessToken}` } });
    expect(get.status).toBe(405);
  });
});
