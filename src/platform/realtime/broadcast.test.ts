// The broadcast of one node (one process, Socket.IO's in-memory adapter): it reaches each socket
// in any of its rooms once and no other socket, with no server-side emit (the in-memory adapter
// only warns that it has none). Two nodes on PostgreSQL: adapter.test.ts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Namespace } from 'socket.io';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { closeSockets, connectSocket } from '../../../test/socket-client.js';
import { broadcaster } from './broadcast.js';

type TestEvents = Record<string, (payload: unknown) => void>;

describe('broadcaster on one node', () => {
  const http = createServer();
  const io = new Server(http, { serveClient: false });
  afterAll(async () => {
    closeSockets();
    await io.close();
  });

  it('reaches each socket of its rooms once, and no other', async () => {
    io.on('connection', (socket) => void socket.join(String(socket.handshake.auth.room)));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const send = broadcaster(io.of('/') as unknown as Namespace<Record<string, never>, TestEvents>);
    const [inA, inB, elsewhere] = await Promise.all(
      ['a', 'b', 'c'].map((room) => connectSocket(url, { auth: { room } })),
    );
    const warn = vi.spyOn(console, 'warn');
    try {
      send(['a', 'b'], 'n', 1);
      send('c', 'n', 2);
      await Promise.all([inA!.next('n'), inB!.next('n'), elsewhere!.next('n')]);
      const got = (s: typeof inA) => s!.events.filter((e) => e.name === 'n').map((e) => e.payload);
      expect([got(inA), got(inB), got(elsewhere)]).toEqual([[1], [1], [2]]);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
