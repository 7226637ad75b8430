// The AsyncAPI document of the Socket.IO namespaces: valid AsyncAPI 3.0 (the official parser),
// every event described with an example that fits its schema, and no event the server emits
// missing from it (in the source, and on the wire of a real chat turn and observer session).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatNamespaceDoc } from '../src/modules/chat/index.js';
import { observerNamespaceDoc } from '../src/modules/observer/index.js';
import { closeSockets, connectSocket, createTestApp, createUser, type TestApp } from './harness.js';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.api('GET', '/api/asyncapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

/** Event names per namespace address, as the document lists them (acks are not events). */
function documented(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const channel of Object.values<any>(doc.channels)) {
    const names = Object.values<any>(channel.messages)
      .map((m) => m.name as string)
      .filter((n) => !n.endsWith('Ack'));
    out.set(channel.address, new Set(names));
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('AsyncAPI document', () => {
  it('is valid AsyncAPI 3.0 by the official parser', async () => {
    expect(doc.asyncapi).toBe('3.0.0');
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
    // severity 0 is DiagnosticSeverity.Error (compared as a number: two copies of the enum's type).
    const errors = diagnostics.filter((d) => Number(d.severity) === 0);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    expect(
      document!
        .channels()
        .all()
        .map((c) => c.address()),
    ).toEqual(['/', '/observer']);
    // Client → server events carry their acknowledgement as the operation's reply.
    const chatMessage = document!.operations().get('chat.chatMessage')!;
    expect(chatMessage.action()).toBe('receive');
    expect(
      chatMessage
        .reply()
        ?.messages()
        .all()
        .map((m) => m.name()),
    ).toEqual(['chatMessageAck']);
  });

  it('describes every event and operation, each with an example that fits its schema', () => {
    for (const channel of Object.values<any>(doc.channels))
      for (const [key, m] of Object.entries<any>(channel.messages)) {
        expect(m.description, key).toMatch(/\w{3}/);
        expect(m.examples?.length, key).toBeGreaterThan(0);
      }
    for (const [key, op] of Object.entries<any>(doc.operations)) expect(op.description, key).toMatch(/\w{3}/);
    for (const ns of [chatNamespaceDoc, observerNamespaceDoc]) {
      for (const [event, d] of [...Object.entries(ns.emits), ...Object.entries(ns.receives)]) {
        const r = d.payload.safeParse(d.example);
        expect(r.success, `${event}: ${r.error?.message}`).toBe(true);
      }
      for (const [event, d] of Object.entries(ns.receives)) {
        const r = d.ack.payload.safeParse(d.ack.example);
        expect(r.success, `${event} ack: ${r.error?.message}`).toBe(true);
      }
      expect(ns.auth.safeParse(ns.authExample).success).toBe(true);
    }
  });

  it('names every event the source emits', () => {
    const all = new Set([...documented().values()].flatMap((s) => [...s]));
    const emitted = new Set<string>();
    for (const file of sourceFiles('src')) {
      if (file.startsWith(join('src', 'client'))) continue; // the client emits the server's received events
      for (const m of readFileSync(file, 'utf8').matchAll(/\.emit\(\s*['"]([\w:-]+)['"]/g))
        emitted.add(m[1]!);
    }
    expect(emitted.size).toBeGreaterThan(5);
    expect([...emitted].filter((e) => !all.has(e))).toEqual([]);
  });

  it('names every event a real chat turn and observer session receive', async () => {
    const names = documented();
    const cso = await createUser(t, 'cso');
    const user = await createUser(t);

    const chat = await connectSocket(t.url, { auth: { token: user.accessToken } });
    await chat.send('chatMessage', { message: 'Hello there', clientMessageId: 'asyncapi-1' });
    await chat.send('chatMessage', { message: '' });
    const assistant = await t.deps.services.characters.assistantUserId();
    await chat.send('directNpcMessage', { npcUserId: assistant, message: 'Hi' }, 'directNpcResponse');

    const obs = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'Watch', level: 8, source: 'portal', userId: cso.id },
    });
    const watcher = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: cso.accessToken, observerId: obs.body.id },
    });
    const leaf = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'Leaf', level: 5, source: 'portal', parentInstanceId: obs.body.id },
    });
    await watcher.next('timeline_update');
    await t.api('PATCH', `/api/admin/instances/${leaf.body.id}`, {
      token: cso.accessToken,
      body: { isActive: false },
    });
    await watcher.next('instance_activity');

    const chatEvents = new Set(chat.events.map((e) => e.name));
    for (const e of [
      'assistantThinking',
      'assistantResponseDelta',
      'assistantResponse',
      'assistantIdle',
      'chatError',
    ])
      expect(chatEvents).toContain(e);
    expect([...chatEvents].filter((e) => !names.get('/')!.has(e))).toEqual([]);
    const observerEvents = new Set(watcher.events.map((e) => e.name));
    expect([...observerEvents].filter((e) => !names.get('/observer')!.has(e))).toEqual([]);
  });

  it('is linked from /docs, whose introduction lists the events', async () => {
    const openapi = await t.api('GET', '/api/openapi.json');
    const intro: string = openapi.body.info.description;
    expect(intro).toContain('(/api/asyncapi.json)');
    for (const ns of [chatNamespaceDoc, observerNamespaceDoc])
      for (const event of [...Object.keys(ns.emits), ...Object.keys(ns.receives)])
        expect(intro).toContain(`\`${event}\``);
    expect((await t.api('GET', '/docs')).status).toBe(200);
  });
});
