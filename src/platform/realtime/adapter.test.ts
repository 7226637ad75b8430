// The realtime adapter's NOTIFYs, coalesced per turn of the event loop: against a recording pool,
// and (when DATABASE_URL names a PostgreSQL server) against the server, whose listener must hear
// every notification once, in order, duplicates included. Broadcasts (broadcast.ts) reach the
// node's own sockets without waiting for their NOTIFY, and the other nodes' after it (two
// Socket.IO servers on one PostgreSQL).
import { createAdapter } from '@socket.io/postgres-adapter';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Server, type Namespace } from 'socket.io';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../test/eventually.js';
import { closeSockets, connectSocket, type TestSocket } from '../../../test/socket-client.js';
import { coalescingNotifies } from './adapter.js';
import { broadcaster } from './broadcast.js';

const NOTIFY = 'SELECT pg_notify($1, $2)';

/** The test's events: any name, one payload. */
type TestEvents = Record<string, (payload: unknown) => void>;

function recordingPool(fail = false) {
  const statements: { text: string; values: unknown[] }[] = [];
  const pool = {
    connect: () => Promise.resolve('client'),
    query: (text: string, values: unknown[]) => {
      statements.push({ text, values });
      return fail ? Promise.reject(new Error('down')) : Promise.resolve({ rows: [] });
    },
  };
  return { statements, pool: coalescingNotifies(pool as unknown as pg.Pool) };
}

describe('coalescingNotifies', () => {
  it('sends the NOTIFYs of one turn as one statement, in order, and resolves each after it', async () => {
    const { statements, pool } = recordingPool();
    const sent = [
      pool.query(NOTIFY, ['c', 'a']),
      pool.query(NOTIFY, ['c', 'b']),
      pool.query(NOTIFY, ['d', 'a']),
    ];
    expect(statements).toEqual([]);
    await Promise.all(sent);
    expect(statements).toEqual([
      {
        text: expect.stringContaining('unnest') as string,
        values: [
          ['c', 'c', 'd'],
          ['a', 'b', 'a'],
        ],
      },
    ]);
    // A lone one is the adapter's own statement.
    await pool.query(NOTIFY, ['c', 'z']);
    expect(statements[1]).toEqual({ text: NOTIFY, values: ['c', 'z'] });
  });

  it('starts another statement at a repeated channel and payload; passes other statements through', async () => {
    const { statements, pool } = recordingPool();
    await Promise.all([
      pool.query(NOTIFY, ['c', 'a']),
      pool.query(NOTIFY, ['c', 'b']),
      pool.query(NOTIFY, ['c', 'a']),
      pool.query('DELETE FROM x', []),
    ]);
    expect(statements.map((s) => s.values)).toEqual([
      [],
      [
        ['c', 'c'],
        ['a', 'b'],
      ],
      ['c', 'a'],
    ]);
    expect(await pool.connect()).toBe('client');
  });

  it('fails each publish of a failed statement', async () => {
    const { pool } = recordingPool(true);
    const results = await Promise.allSettled([
      pool.query(NOTIFY, ['c', 'a']),
      pool.query(NOTIFY, ['c', 'b']),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  // PostgreSQL only, here and below: the adapter exists only there (attachRealtimeAdapter attaches
  // nothing on the embedded database, which one process serves, so its sockets are all there is),
  // and NOTIFY/LISTEN between sessions needs a server several connections reach.
  it.runIf(process.env.DATABASE_URL?.startsWith('postgres'))(
    'on PostgreSQL: the listener hears each notification once, in order',
    async () => {
      const url = process.env.DATABASE_URL!;
      const listener = new pg.Client({ connectionString: url });
      const raw = new pg.Pool({ connectionString: url, max: 2 });
      await listener.connect();
      try {
        const channel = `coalesce_test_${process.pid}`;
        const heard: string[] = [];
        listener.on('notification', (m) => heard.push(m.payload ?? ''));
        await listener.query(`LISTEN "${channel}"`);
        const pool = coalescingNotifies(raw);
        const payloads = ['1', '2', '1', '3', '3', '4'];
        await Promise.all(payloads.map((p) => pool.query(NOTIFY, [channel, p])));
        // Every notification arrives; then none more (a duplicate would follow its original).
        await eventually(() => expect(heard).toHaveLength(payloads.length));
        await listener.query('select 1');
        expect(heard).toEqual(payloads);
      } finally {
        await listener.end();
        await raw.end();
      }
    },
  );

  it.runIf(process.env.DATABASE_URL?.startsWith('postgres'))(
    "on PostgreSQL: a broadcast reaches the node's sockets before its NOTIFY is done, the other node's after it, in order",
    async () => {
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
      const node = async (pool: pg.Pool) => {
        const http = createServer();
        const io = new Server(http, { serveClient: false });
        io.adapter(createAdapter(pool, { channelPrefix }));
        io.on('connection', (socket) => void socket.join('r'));
        await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
        const send = broadcaster(io.of('/') as unknown as Namespace<Record<string, never>, TestEvents>);
        return { io, send, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
      };
      const a = await node(poolA);
      const b = await node(rawB);
      const got = (c: TestSocket, name: string) =>
        c.events.filter((e) => e.name === name).map((e) => e.payload as unknown);
      try {
        const onA = await connectSocket(a.url);
        const onB = await connectSocket(b.url);
        // Each adapter listens once it hears the other: node B hears node A, node A hears node B
        // (each sets up its LISTEN on its own; on a busy machine B's broadcast at the end once
        // went out before A listened, and was lost).
        let sent = 0;
        await eventually(() => {
          if (got(onB, 'warm').length > 0 && got(onA, 'warm-b').length > 0) return true;
          if (got(onB, 'warm').length === 0) a.send('r', 'warm', sent++);
          if (got(onA, 'warm-b').length === 0) b.send('r', 'warm-b', sent++);
          return false;
        });
        expect(got(onB, 'warm')[0]).toEqual(expect.any(Number));

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
    },
  );
});
