// Write coalescing (coalesce.ts): frames queued for a connection in one turn leave in one write,
// in order; rooms, namespaces, acks in both directions and a disconnect right after an emit
// behave as without it. A plain Socket.IO server on an HTTP server of its own, no database.
import { readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Server, type Socket } from 'socket.io';
import { io as connectClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSockets, connectSocket, type TestSocket } from '../../../test/socket-client.js';
import { coalesceWebSocketWrites } from './coalesce.js';

let http: HttpServer;
let io: Server;
let url: string;

beforeAll(async () => {
  http = createServer();
  io = new Server(http, { serveClient: false });
  coalesceWebSocketWrites(io);
  io.on('connection', (socket) => {
    void socket.join(String(socket.handshake.auth.room ?? 'none'));
    socket.on('echo', (payload: unknown, ack: (answer: unknown) => void) => ack({ echoed: payload }));
  });
  io.of('/other').on(
    'connection',
    (socket) => void socket.join(String(socket.handshake.auth.room ?? 'none')),
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(async () => {
  closeSockets();
  await io.close();
});

/** The server's side of the client's connection (the newest one of the namespace). */
function serverSocket(namespace = '/'): Socket {
  return [...io.of(namespace).sockets.values()].at(-1)!;
}

/** The TCP socket under the server's WebSocket of `socket`. */
function tcpOf(socket: Socket): Duplex {
  return (socket.conn.transport as unknown as { socket: { _socket: Duplex } }).socket._socket;
}

/** Waits until `client` has received `count` events named `name`. */
async function received(client: TestSocket, name: string, count: number) {
  for (;;) {
    const got = client.events.filter((e) => e.name === name);
    if (got.length >= count) return got.map((e) => e.payload as unknown);
    await client.next(name, { from: client.events.length });
  }
}

describe('WebSocket write coalescing', () => {
  it('runs on the versions it was checked on (engine.io 6.6.x, ws 8.x)', () => {
    // It reads engine.io's socket (flush, writeBuffer) and ws's `_socket`, which neither exports.
    const version = (name: string) =>
      (
        JSON.parse(
          readFileSync(new URL(`../../../node_modules/${name}/package.json`, import.meta.url), 'utf8'),
        ) as { version: string }
      ).version;
    expect(version('engine.io')).toMatch(/^6\.6\./);
    expect(version('ws')).toMatch(/^8\./);
  });

  it('sends the frames of one turn in one write, in the order emitted', async () => {
    const client = await connectSocket(url);
    const socket = serverSocket();
    const tcp = tcpOf(socket) as unknown as {
      _writev: (chunks: unknown[], cb: unknown) => void;
      _write: (...a: unknown[]) => void;
    };
    const calls: number[] = [];
    const writev = tcp._writev.bind(tcp);
    const write = tcp._write.bind(tcp);
    tcp._writev = (chunks: unknown[], cb: unknown) => {
      calls.push(chunks.length);
      writev(chunks, cb);
    };
    tcp._write = (...args: unknown[]) => {
      calls.push(1);
      write(...args);
    };
    for (let i = 0; i < 300; i++) socket.emit('n', i);
    const got = await received(client, 'n', 300);
    tcp._writev = writev;
    tcp._write = write;
    expect(got).toEqual(Array.from({ length: 300 }, (_, i) => i));
    // One write carrying every frame (each a header and a payload).
    expect(calls).toEqual([600]);
    client.close();
  });

  it('keeps the order across turns, and acks work both ways', async () => {
    const client = await connectSocket(url);
    const socket = serverSocket();
    socket.emit('n', 0);
    await new Promise((r) => setImmediate(r));
    socket.emit('n', 1);
    await new Promise((r) => setTimeout(r, 1));
    socket.emit('n', 2);
    expect(await received(client, 'n', 3)).toEqual([0, 1, 2]);

    // The client's emit answered by the server's ack.
    expect(await client.socket.timeout(10_000).emitWithAck('echo', 'hello')).toEqual({ echoed: 'hello' });
    // The server's emit answered by the client's ack, amid other frames of the same turn.
    client.socket.on('ask', (q: number, ack: (answer: number) => void) => ack(q * 2));
    socket.emit('n', 3);
    const answer = socket.timeout(10_000).emitWithAck('ask', 21);
    socket.emit('n', 4);
    expect(await answer).toBe(42);
    expect(await received(client, 'n', 5)).toEqual([0, 1, 2, 3, 4]);
    client.close();
  });

  it('delivers a broadcast to every member of the room, and only there, in each namespace', async () => {
    const a = await Promise.all(
      Array.from({ length: 10 }, () => connectSocket(url, { auth: { room: 'a' } })),
    );
    const b = await Promise.all(Array.from({ length: 5 }, () => connectSocket(url, { auth: { room: 'b' } })));
    const other = await Promise.all(
      Array.from({ length: 5 }, () => connectSocket(url, { namespace: '/other', auth: { room: 'a' } })),
    );
    for (let i = 0; i < 50; i++) {
      io.to('a').emit('m', `a${i}`);
      io.to('b').emit('m', `b${i}`);
      io.of('/other').to('a').emit('m', `o${i}`);
    }
    const each = (prefix: string) => Array.from({ length: 50 }, (_, i) => `${prefix}${i}`);
    for (const c of a) expect(await received(c, 'm', 50)).toEqual(each('a'));
    for (const c of b) expect(await received(c, 'm', 50)).toEqual(each('b'));
    for (const c of other) expect(await received(c, 'm', 50)).toEqual(each('o'));
    // Nothing more arrives: a round trip on each socket, then the counts again.
    for (const c of [...a, ...b]) await c.socket.timeout(10_000).emitWithAck('echo', 'sync');
    for (const c of [...a, ...b, ...other]) expect(c.events.filter((e) => e.name === 'm')).toHaveLength(50);
    for (const c of [...a, ...b, ...other]) c.close();
  });

  it('keeps the order across an upgrade from HTTP long-polling to WebSocket', async () => {
    // The browser's way: long-polling first (not coalesced), then the WebSocket upgrade.
    const client = connectClient(url, { reconnection: false, forceNew: true });
    const got: number[] = [];
    client.on('n', (n: number) => got.push(n));
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    const socket = serverSocket();
    let i = 0;
    // Five a turn while the transport changes under them, and for ten turns on the WebSocket.
    for (let turn = 0, after = 0; after < 10 && turn < 2000; turn++) {
      for (let j = 0; j < 5; j++) socket.emit('n', i++);
      if (socket.conn.transport.name === 'websocket') after++;
      await new Promise((r) => setTimeout(r, 5));
    }
    const last = i - 1;
    if (!got.includes(last))
      await new Promise<void>((resolve) => client.on('n', (n: number) => n === last && resolve()));
    expect(got).toEqual(Array.from({ length: i }, (_, k) => k));
    expect(client.io.engine.transport.name).toBe('websocket');
    client.close();
  });

  it('sends what was emitted before a disconnect made in the same turn', async () => {
    const client = await connectSocket(url);
    const socket = serverSocket();
    const disconnected = new Promise<string>((resolve) => client.socket.once('disconnect', resolve));
    socket.emit('n', 'last words');
    socket.disconnect(true);
    expect(await disconnected).toBe('io server disconnect');
    expect(client.events.filter((e) => e.name === 'n').map((e) => e.payload as unknown)).toEqual([
      'last words',
    ]);
  });
});
