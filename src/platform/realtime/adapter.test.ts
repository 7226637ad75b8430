// The realtime adapter on PostgreSQL (two Socket.IO servers on one database, each with
// attachRealtimeAdapter's pool): a node's broadcasts reach the other node in the order sent, and
// a node stopped while its adapter still sets up its LISTEN connection releases it, and one whose
// connections were cut broadcasts again and still shuts down. Broadcasts
// (broadcast.ts) reach the node's own sockets without waiting for their NOTIFY, and the other
// nodes' after it.
import { createAdapter } from '@socket.io/postgres-adapter';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import pino from 'pino';
import { Server, type Namespace } from 'socket.io';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../test/eventually.js';
import { closeSockets, connectSocket, type TestSocket } from '../../../test/socket-client.js';
import { startTcpProxy } from '../../../test/tcp-proxy.js';
import type { DatabaseHandle } from '../db/database.js';
import { attachRealtimeAdapter } from './adapter.js';
import { broadcaster } from './broadcast.js';

/** The test's events: any name, one payload. */
type TestEvents = Record<string, (payload: unknown) => void>;

const got = (c: TestSocket, name: string) =>
  c.events.filter((e) => e.name === name).map((e) => e.payload as unknown);

/** A Socket.IO server on an ephemeral port whose sockets join room 'r'. */
async function serve(adapt: (io: Server) => void) {
  const http = createServer();
  const io = new Server(http, { serveClient: false });
  adapt(io);
  io.on('connection', (socket) => void socket.join('r'));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const send = broadcaster(io.of('/') as unknown as Namespace<Record<string, never>, TestEvents>);
  return { io, send, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

/** Broadcasts from each node until the other hears it: each adapter sets up its LISTEN on its own
 * (on a busy machine a broadcast sent before the other listened was lost). */
async function warm(a: Awaited<ReturnType<typeof serve>>, b: typeof a, onA: TestSocket, onB: TestSocket) {
  let sent = 0;
  await eventually(() => {
    if (got(onB, 'warm').length > 0 && got(onA, 'warm-b').length > 0) return true;
    if (got(onB, 'warm').length === 0) a.send('r', 'warm', sent++);
    if (got(onA, 'warm-b').length === 0) b.send('r', 'warm-b', sent++);
    return false;
  });
}

// PostgreSQL only: the adapter exists only there (attachRealtimeAdapter attaches nothing on the
// embedded database, which one process serves, so its sockets are all there is), and
// NOTIFY/LISTEN between sessions needs a server several connections reach.
describe.runIf(process.env.DATABASE_URL?.startsWith('postgres'))('the realtime adapter', () => {
  const url = process.env.DATABASE_URL!;
  const log = pino({ level: 'silent' });
  // Its own channel: test files sharing the database must not hear each other.
  const database = { kind: 'postgres', schema: `adapter_test_${process.pid}` } as DatabaseHandle;

  it("on PostgreSQL: the other node hears a node's broadcasts, in the order sent", async () => {
    const releases: (() => Promise<void>)[] = [];
    const node = () => serve((io) => releases.push(attachRealtimeAdapter(io, { database, url, log })));
    const a = await node();
    const b = await node();
    try {
      const onA = await connectSocket(a.url);
      const onB = await connectSocket(b.url);
      await warm(a, b, onA, onB);
      // A commit's broadcasts, made one after another in one turn.
      const sent = Array.from({ length: 50 }, (_, i) => i);
      for (const i of sent) a.send('r', 'n', i);
      await onB.next('n', { match: (n) => n === 49 });
      expect(got(onB, 'n')).toEqual(sent);
      expect(got(onA, 'n')).toEqual(sent);
    } finally {
      closeSockets();
      await a.io.close();
      await b.io.close();
      for (const release of releases) await release();
    }
  });

  it('on PostgreSQL: after its connections are cut, a node broadcasts to the other again and still shuts down', async () => {
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `127.0.0.1:${proxy.port}`;
    const releases: (() => Promise<void>)[] = [];
    const a = await serve((io) =>
      releases.push(attachRealtimeAdapter(io, { database, url: target.toString(), log })),
    );
    const b = await serve((io) => releases.push(attachRealtimeAdapter(io, { database, url, log })));
    try {
      const onA = await connectSocket(a.url);
      const onB = await connectSocket(b.url);
      await warm(a, b, onA, onB);
      // The LISTEN connection and the NOTIFY one both end; the adapter makes its LISTEN again.
      proxy.cut();
      proxy.restore();
      let sent = 0;
      // Once A listens again (it hears B), its NOTIFYs still have a connection to go out on.
      await eventually(() => {
        if (got(onA, 'back').length > 0) return true;
        b.send('r', 'back', sent++);
        return false;
      });
      await eventually(() => {
        if (got(onB, 'again').length > 0) return true;
        a.send('r', 'again', sent++);
        return false;
      });
    } finally {
      closeSockets();
      await a.io.close();
      await b.io.close();
      // Resolves only once each pool has ended, which waits for every connection to come back.
      for (const release of releases) await release();
      await proxy.close();
    }
  });

  it('on PostgreSQL: a node closed while its adapter still connects gives its connections back', async () => {
    const http = createServer();
    const io = new Server(http, { serveClient: false });
    const release = attachRealtimeAdapter(io, { database, url, log });
    // At once: the adapter is still acquiring its LISTEN connection.
    await io.close();
    // Resolves only once the pool has ended, which waits for every connection to come back.
    await release();
  });

  it("on PostgreSQL: a broadcast reaches the node's sockets before its NOTIFY is done, the other node's after it, in order", async () => {
    const url = process.env.DATABASE_URL!;
    const channelPrefix = `local_first_test_${process.pid}`;
    const rawA = new pg.Pool({ connectionString: url, max: 2 });
    const rawB = new pg.Pool({ connectionString: url, max: 2 });
    // Node A's NOTIFYs wait here until released, in order.
    let holding = false;
    const held: (() => Promise<void>)[] = [];
    const poolA = {
      connect: () => rawA.connect(),
      query: (text: string, values?: unknown[]) => {
        if (!holding || !text.includes('pg_notify')) return rawA.query(text, values);
        return new Promise((resolve, reject) =>
          held.push(() => rawA.query(text, values).then(resolve, reject)),
        );
      },
    } as unknown as pg.Pool;
    const node = (pool: pg.Pool) => serve((io) => io.adapter(createAdapter(pool, { channelPrefix })));
    const a = await node(poolA);
    const b = await node(rawB);
    try {
      const onA = await connectSocket(a.url);
      const onB = await connectSocket(b.url);
      await warm(a, b, onA, onB);

      holding = true;
      for (let i = 0; i < 5; i++) a.send('r', 'n', i);
      await onA.next('n', { match: (n) => n === 4 });
      expect(got(onA, 'n')).toEqual([0, 1, 2, 3, 4]);
      expect(held.length).toBeGreaterThan(0);
      expect(got(onB, 'n')).toEqual([]);

      holding = false;
      for (const send of held.splice(0)) await send();
      await onB.next('n', { match: (n) => n === 4 });
      expect(got(onB, 'n')).toEqual([0, 1, 2, 3, 4]);
      // A local-only broadcast stays on its node.
      a.io.local.to('r').emit('only-a', 1);
      b.send('r', 'n', 5);
      await onA.next('n', { match: (n) => n === 5 });
      expect(got(onB, 'only-a')).toEqual([]);
      expect(got(onA, 'only-a')).toEqual([1]);
    } finally {
      closeSockets();
      holding = false;
      for (const send of held.splice(0)) await send();
      await a.io.close();
      await b.io.close();
      await rawA.end();
      await rawB.end();
    }
  });
});
