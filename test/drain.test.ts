// A node's drain (what SIGTERM runs, src/startup/shutdown.ts): a chat turn under way when it
// begins is answered in full, while a new turn and a new request are refused with 503; then the
// sockets are closed as a lost transport (a client reconnects, elsewhere) and the node closes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { connectSocket, createTestApp, createUser, eventually, type TestApp } from './harness.js';
import { drainAndClose } from '../src/startup/shutdown.js';

let fake: FakeModelServer;
let t: TestApp;
beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env());
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

it('lets a turn under way finish, refuses new work, then closes the sockets as a lost transport', async () => {
  const alice = await createUser(t, 'public', { name: 'Alice' });
  const c = await connectSocket(t.url, { auth: { token: alice.accessToken } });
  const disconnected = new Promise<string>((ok) => c.socket.once('disconnect', ok));
  let answer!: () => void;
  fake.replyChat({
    text: 'Answered while the node drained.',
    until: new Promise<void>((ok) => (answer = ok)),
  });

  const turn = c.send('chatMessage', { message: 'Hello', clientMessageId: 'drain-1' });
  await eventually(() => expect(fake.chatRequests()).toHaveLength(1)); // the model call is under way
  const draining = drainAndClose(t, t.deps, 60_000);

  // New work is refused while the turn runs: a request (even the health check), and a turn.
  const health = await t.app.inject({ method: 'GET', url: '/api/health' });
  expect(health.statusCode).toBe(503);
  expect(health.json()).toMatchObject({ type: '/problems/service_unavailable' });
  const refused = await c.socket.timeout(20_000).emitWithAck('chatMessage', {
    message: 'Another',
    clientMessageId: 'drain-2',
  });
  expect(refused).toMatchObject({ ok: false, error: { status: 503 } });
  expect(fake.chatRequests()).toHaveLength(1);

  answer();
  const { ack, events } = await turn;
  expect(ack).toMatchObject({ ok: true });
  expect(events.find((e) => e.name === 'assistantResponse')?.payload).toMatchObject({
    text: 'Answered while the node drained.',
  });
  expect(await draining).toEqual({ settled: true, releasedJobs: 0 });
  // Socket.IO's client reconnects after "transport close" (unlike "io server disconnect").
  expect(await disconnected).toBe('transport close');
}, 90_000);
