// The lingering close's bounds, on a Fastify server with a small body limit: the rest of a refused
// body is read and dropped, the connection then serves the next request; a client that sends past
// the byte bound, or stops before its body ends, is cut off. Raw sockets, so the test controls
// what the client sends and when.
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerLingeringClose, type LingerLimits } from './linger.js';

const LIMIT = 1024;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function server(limits: LingerLimits): Promise<number> {
  app = Fastify({ bodyLimit: LIMIT });
  registerLingeringClose(app, limits);
  app.post('/echo', async (req) => ({ got: req.body }));
  app.get('/ping', async () => ({ pong: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

interface Client {
  socket: Socket;
  /** Everything the server sent so far. */
  received: () => string;
  /** Resolves once the server sent a text matching `re`. */
  until: (re: RegExp) => Promise<void>;
  closed: Promise<void>;
}

function client(port: number): Client {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  const waiters: (() => void)[] = [];
  socket.on('data', (c: Buffer) => {
    text += c.toString('latin1');
    for (const w of waiters.splice(0)) w();
  });
  // Writes after the server cut the connection fail (EPIPE): that is the bound being applied.
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const until = async (re: RegExp) => {
    while (!re.test(text)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { socket, received: () => text, until, closed };
}

const head = (length: number) =>
  `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('lingering close', () => {
  it('reads the rest of a refused body, then the same connection serves the next request', async () => {
    const port = await server({ maxBytes: 1024 * 1024, maxMs: 60_000 });
    const c = client(port);
    const size = 64 * 1024;
    c.socket.write(head(size));
    await c.until(/\r\n\r\n\{[^}]*"statusCode":413[^}]*\}/);
    expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(c.received()).not.toMatch(/connection: close/i);
    // The client sends its whole body after the answer, then another request.
    c.socket.write(Buffer.alloc(size, 0x61));
    c.socket.write('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.until(/\{"pong":true\}/);
    c.socket.destroy();
  });

  it('cuts off a client that sends more than the byte bound after its answer', async () => {
    const port = await server({ maxBytes: 256 * 1024, maxMs: 60_000 });
    const c = client(port);
    c.socket.write(head(64 * 1024 * 1024));
    await c.until(/ 413 /);
    // It keeps sending as if it had not read the answer.
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let open = true;
    void c.closed.then(() => (open = false));
    for (let sent = 0; open && sent < 64 * 1024 * 1024; sent += chunk.length) {
      if (!c.socket.write(chunk))
        await Promise.race([new Promise((r) => c.socket.once('drain', r)), c.closed]);
    }
    await c.closed;
    expect(open).toBe(false);
  });

  it('cuts off a client whose body does not end within the time bound', async () => {
    const port = await server({ maxBytes: 1024 * 1024, maxMs: 100 });
    const c = client(port);
    c.socket.write(head(8 * LIMIT));
    c.socket.write(Buffer.alloc(2 * LIMIT, 0x61));
    await c.until(/ 413 /);
    // The rest never comes: the server ends the connection by itself.
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('a client that says Connection: close gets its 413 and the close', async () => {
    const port = await server({ maxBytes: 1024 * 1024, maxMs: 60_000 });
    const c = client(port);
    c.socket.write(head(4 * LIMIT).replace('Host: x\r\n', 'Host: x\r\nConnection: close\r\n'));
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
  });
});
