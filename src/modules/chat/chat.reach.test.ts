// What one player's turn may reach, end to end: an observer's reflection (which quotes every
// user's activity) never reaches a player's model request, only a SYSTEM turn's; and a channel a
// public user names gives its protocol's wording, never the system figures or other users' events
// its protocol would see for a caller entitled to them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { fixtures } from '../../../test/observer-fixtures.js';
import { chatClient } from './chat.fixtures.js';

let fake: FakeModelServer;
let t: TestApp;
let cso: TestUser;
const SECRET = 'Bob buried the amber compass beneath the windmill';

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ CHAT_RATE_LIMIT: '1000' }));
  cso = await createUser(t, 'cso');
  const configured = await t.api('POST', '/api/chat-platform/channel/config', {
    token: cso.accessToken,
    body: { channelId: 'ops-room', protocolId: 'system_protocol_v1' },
  });
  expect(configured.status).toBe(200);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => fake.reset());

/** Everything the model received in the turn's first request. */
async function firstRequest(user: TestUser, message: string, channelId?: string) {
  fake.reset();
  const c = await chatClient(t, user);
  const r = await c.send('chatMessage', { message, ...(channelId ? { channelId } : {}) });
  c.socket.close();
  expect(r.ack.ok).toBe(true);
  return JSON.stringify(fake.chatRequests()[0]!.body.messages);
}

describe("a player's turn", () => {
  it("never receives an observer's reflection on other users; a SYSTEM turn does", async () => {
    const fx = fixtures(t, () => cso);
    const observer = await fx.instance({ name: 'Watcher', level: 8, source: 'portal', userId: cso.id });
    await fx.record({ eventType: 'note', eventText: SECRET, instanceId: observer.id });
    fake.replyChat({ text: `Reflection: ${SECRET}.` });
    const reflected = await t.api('POST', `/api/observer/observer/${observer.id}/reflection`, {
      token: cso.accessToken,
      body: { hours: 24 },
    });
    expect(reflected.status).toBe(201);

    const player = await createUser(t, 'public');
    const question = 'Where did Bob bury the amber compass, beneath the windmill?';
    expect(await firstRequest(player, question)).not.toContain('amber compass beneath');
    expect(await firstRequest(cso, question)).toContain(`Reflection: ${SECRET}`);
  });

  it('takes only the wording of a SYSTEM channel a public user names', async () => {
    const other = await createUser(t, 'public');
    const fx = fixtures(t, () => cso);
    await fx.record({
      eventType: 'purchase',
      eventText: 'the silver lantern sold to another',
      userId: other.id,
    });

    const player = await createUser(t, 'public');
    const viaChannel = await firstRequest(player, 'Status report please', 'ops-room');
    expect(viaChannel).not.toContain('System figures');
    expect(viaChannel).not.toContain('silver lantern');
    // The same channel for a CSO, whose own protocol reaches that far, shows both.
    const forCso = await firstRequest(cso, 'Status report please', 'ops-room');
    expect(forCso).toContain('System figures');
    expect(forCso).toContain('silver lantern');
    // The routing explanation says why.
    const why = await t.api('GET', `/api/protocol/routing?userId=${player.id}&channelId=ops-room`, {
      token: cso.accessToken,
    });
    expect(why.body).toMatchObject({ protocolId: 'system_protocol_v1' });
    expect(why.body.reason).toContain('reach is cut');
  });
});
