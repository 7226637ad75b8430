// What a Socket.IO connection may send before it authenticates (src/platform/realtime/preauth.ts):
// a frame past PREAUTH_BYTES from a connection that has not authenticated closes it before the
// server reads it whole, over WebSocket and over HTTP long-polling; a polling session's upgrade to
// WebSocket waits for its authentication; a connection that never authenticates is closed after
// SOCKET_AUTH_TIMEOUT_MS. An authenticated one still sends a message up to the engine's limit
// (30 × BODY_LIMIT) and gets its answer. Real clients (socket.io-client, and raw HTTP where the
// point is what the server does before it reads a body).
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io, Manager, type Socket } from 'socket.io-client';
import { PREAUTH_BYTES } from '../src/platform/realtime/preauth.js';
import { closeSockets, connectSocket, createTestApp, createUser, type TestApp } from './harness.js';

const BODY_LIMIT = 64 * 1024;
const LIMIT = 30 * BODY_LIMIT;
/** A CONNECT packet far past the pre-auth budget and well under the engine's limit. */
const HUGE_TOKEN = 'x'.repeat(1024 * 1024);
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ BODY_LIMIT: String(BODY_LIMIT) });
});
const opened = new Set<Socket>();
afterAll(async () => {
  for (const s of opened) s.close();
  closeSockets();
  await t.close();
});

type Transport = 'websocket' | 'polling';
type Outcome =
  | { event: 'connect' }
  | { event: 'connect_error'; message: string; problem: unknown }
  | { event: 'disconnect'; reason: string };

/** A client of the default namespace and the first of connect, connect_error, disconnect. */
function client(auth: Record<string, unknown>, transports: Transport[]) {
  const socket = io(t.url, { auth, transports, reconnection: false, forceNew: true });
  opened.add(socket);
  const outcome = new Promise<Outcome>((resolve) => {
    socket.once('connect', () => resolve({ event: 'connect' }));
    socket.once('connect_error', (err: Error & { data?: unknown }) =>
      resolve({ event: 'connect_error', message: err.message, problem: err.data }),
    );
    socket.once('disconnect', (reason) => resolve({ event: 'disconnect', reason }));
  });
  return { socket, outcome };
}

/** The server's next engine connection: its first request, and its close. */
function nextConnection(): Promise<{ request: IncomingMessage; closed: Promise<string> }> {
  return new Promise((resolve) => {
    t.io.engine.once(
      'connection',
      (conn: { request: IncomingMessage; once(e: 'close', l: (reason: string) => void): void }) =>
        resolve({ request: conn.request, closed: new Promise((closed) => conn.once('close', closed)) }),
    );
  });
}

/** Still serving: the health route answers and a client authenticates. */
async function stillServing() {
  expect((await t.api('GET', '/api/health')).status).toBe(200);
  const user = await createUser(t);
  const s = await connectSocket(t.url, { auth: { token: user.accessToken } });
  expect(s.socket.connected).toBe(true);
  s.close();
}

/** An Engine.IO polling session opened by hand: its id. */
async function pollingSession(app = t): Promise<string> {
  const res = await fetch(`${app.url}/socket.io/?EIO=4&transport=polling`);
  const text = await res.text();
  return (JSON.parse(text.slice(1)) as { sid: string }).sid;
}

/** Sends the head of an HTTP request (and `body`, if any) and resolves with the server's answer:
 * its status and `connection` header, or 101 when it upgraded. */
function answerTo(
  app: TestApp,
  path: string,
  opts: { method: string; headers: Record<string, string | number>; body?: string },
): Promise<{ status: number; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method: opts.method, headers: opts.headers });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode!, connection: res.headers.connection });
      req.destroy();
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101 });
    });
    req.on('error', reject);
    req.flushHeaders();
    if (opts.body !== undefined) req.write(opts.body);
  });
}

const postPath = (sid: string) => `/socket.io/?EIO=4&transport=polling&sid=${sid}`;

describe('before authentication', () => {
  it('a WebSocket frame past the budget closes the connection after one read of it', async () => {
    const conn = nextConnection();
    const c = client({ token: HUGE_TOKEN }, ['websocket']);
    // Closed, not refused: the server never read the token through to refuse it.
    // (A transport error when the client was still writing as the server closed.)
    expect(await c.outcome).toEqual({
      event: 'disconnect',
      reason: expect.stringMatching(/^transport (close|error)$/),
    });
    const { request: req, closed } = await conn;
    await closed;
    // The budget, one read of the socket (64 KiB) and the upgrade request: not the megabyte.
    expect(req.socket.bytesRead).toBeLessThan(PREAUTH_BYTES + 64 * 1024 + 4096);
    await stillServing();
  });

  it('a polling POST past the budget is refused before its body is read, and its session closed', async () => {
    const c = client({ token: HUGE_TOKEN }, ['polling']);
    const outcome = await c.outcome;
    // The POST fails (or the session's close packet comes first): no problem was ever answered.
    expect(outcome.event).not.toBe('connect');
    expect(outcome).not.toHaveProperty('problem.code');

    // By hand: only the head of a POST announcing a megabyte is sent, and it is answered.
    const sid = await pollingSession();
    const answer = await answerTo(t, postPath(sid), {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'content-length': HUGE_TOKEN.length },
    });
    expect(answer).toEqual({ status: 400, connection: 'close' });
    const poll = await (await fetch(`${t.url}${postPath(sid)}`)).text();
    expect(poll.split('\x1e')).toContain('1'); // the close packet
    await stillServing();
  });

  it('a polling POST without a Content-Length is refused', async () => {
    const sid = await pollingSession();
    const answer = await answerTo(t, postPath(sid), {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'transfer-encoding': 'chunked' },
      body: '40',
    });
    expect(answer).toEqual({ status: 400, connection: 'close' });
  });

  it('a small CONNECT is read and refused as before', async () => {
    const c = client({ token: 'not.a.jwt' }, ['websocket']);
    expect(await c.outcome).toMatchObject({ event: 'connect_error', problem: { code: 'unauthenticated' } });
    const p = client({ token: 'not.a.jwt' }, ['polling']);
    expect(await p.outcome).toMatchObject({ event: 'connect_error', problem: { code: 'unauthenticated' } });
  });
});

describe('the time to authenticate', () => {
  // A server of its own, whose connections have 300 ms to authenticate.
  let short: TestApp;
  beforeAll(async () => {
    short = await createTestApp({ SOCKET_AUTH_TIMEOUT_MS: '300' });
  });
  afterAll(() => short.close());

  for (const transport of ['websocket', 'polling'] as const)
    it(`SOCKET_AUTH_TIMEOUT_MS closes a ${transport} connection that never authenticates`, async () => {
      const manager = new Manager(short.url, {
        transports: [transport],
        reconnection: false,
        autoConnect: false,
      });
      const closed = new Promise<string>((resolve) => manager.on('close', resolve));
      manager.open();
      expect(await closed).toBe('transport close');
    });

  it("holds a polling session's upgrade to WebSocket until it authenticates", async () => {
    const sid = await pollingSession(short);
    // A client's poll waits meanwhile (it gets the close packet).
    const poll = fetch(`${short.url}${postPath(sid)}`).then((r) => r.text());
    // Never authenticated: the upgrade waits, then fails when the session is closed.
    const answer = await answerTo(short, `/socket.io/?EIO=4&transport=websocket&sid=${sid}`, {
      method: 'GET',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': 13,
        'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
      },
    });
    expect(answer.status).toBe(400);
    expect((await poll).split('\x1e')).toContain('1');
  });

  it('upgrades an authenticated polling session', async () => {
    const user = await createUser(t);
    const c = client({ token: user.accessToken }, ['polling', 'websocket']);
    const upgraded = new Promise<string>((resolve) =>
      c.socket.io.engine.once('upgrade', (transport: { name: string }) => resolve(transport.name)),
    );
    expect(await c.outcome).toEqual({ event: 'connect' });
    expect(await upgraded).toBe('websocket');
    c.socket.close();
  });
});

describe('once authenticated', () => {
  /** A chatMessage whose one image brings it to `bytes` bytes, near the engine packet's size. */
  function imageMessage(bytes: number) {
    const image = Buffer.concat([PNG, Buffer.alloc(Math.floor(((bytes - 512) * 3) / 4) - PNG.length)]);
    return { message: 'What is this?', imageBase64Array: [image.toString('base64')] };
  }

  for (const transport of ['websocket', 'polling'] as const) {
    it(`a ${transport} client sends a message up to the engine's limit and gets its answer`, async () => {
      const user = await createUser(t);
      const c = client({ token: user.accessToken }, [transport]);
      expect(await c.outcome).toEqual({ event: 'connect' });
      const payload = imageMessage(LIMIT);
      expect(JSON.stringify(payload).length).toBeGreaterThan(LIMIT - 1024);
      const ack = (await c.socket.timeout(20_000).emitWithAck('chatMessage', payload)) as { ok: boolean };
      expect(ack).toMatchObject({ ok: true, conversationId: expect.any(Number) });
      c.socket.close();
    });

    it(`a ${transport} message past the engine's limit closes the connection, as before`, async () => {
      const user = await createUser(t);
      const c = client({ token: user.accessToken }, [transport]);
      expect(await c.outcome).toEqual({ event: 'connect' });
      const disconnected = new Promise<string>((resolve) => c.socket.once('disconnect', resolve));
      c.socket.emit('chatMessage', imageMessage(LIMIT + 4096));
      expect(await disconnected).toMatch(/^transport (close|error)$/);
    });
  }
});
