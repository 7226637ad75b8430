// The embedded database's socket server (pglite-worker.mjs): each read's complete protocol
// messages go to PGlite in one call, so what must hold is the wire protocol's own behaviour:
// an error ends its statement only, a large answer or parameter crosses whole, a message runs
// whole however the reads cut it, a client that leaves mid-transaction leaves nothing open, a
// client's session (its prepared statements, its settings) ends with it, and a second client
// waits for the first.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../../../test/harness.js';
import { openDatabase, type DatabaseHandle } from './database.js';

// Embedded database only: this server is how the process reaches PGlite; with DATABASE_URL set
// nothing runs it.
describe.skipIf(isPostgres())('embedded database socket server', () => {
  let dir: string;
  let h: DatabaseHandle;
  const client = () => new pg.Client(h.pool.options);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pglite-worker-test-'));
    h = await openDatabase({ url: undefined, dataDir: dir, poolSize: 1, poolTimeoutMs: 5000 });
    await h.pool.query('create table kept (id int primary key, note text)');
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a failed statement with its error and serves the next one on the same connection', async () => {
    const c = await h.pool.connect();
    try {
      await expect(c.query('select 1 / $1::int as n', [0])).rejects.toMatchObject({ code: '22012' });
      await expect(c.query('selec $1::int', [1])).rejects.toMatchObject({ code: '42601' });
      await expect(c.query('select $1::int + 1 as n', [41])).resolves.toMatchObject({ rows: [{ n: 42 }] });
      // In a transaction, the error aborts it as PostgreSQL does; rollback recovers.
      await c.query('begin');
      await expect(c.query('insert into kept values ($1, $2)', ['x', 'bad'])).rejects.toMatchObject({
        code: '22P02',
      });
      await expect(c.query('select 1')).rejects.toMatchObject({ code: '25P02' });
      await c.query('rollback');
      await expect(c.query('select $1::text as t', ['after'])).resolves.toMatchObject({
        rows: [{ t: 'after' }],
      });
    } finally {
      c.release();
    }
  });

  it('carries a parameter and an answer far larger than one socket read, whole', async () => {
    const big = 'ü'.repeat(600_000) + 'end';
    const c = await h.pool.connect();
    try {
      const echoed = await c.query<{ t: string }>('select $1::text as t', [big]);
      expect(echoed.rows[0]!.t).toBe(big);
      const rows = await c.query<{ n: number; pad: string }>(
        `select g as n, repeat('x', 1000) as pad from generate_series(1, $1::int) g`,
        [5000],
      );
      expect(rows.rows).toHaveLength(5000);
      expect(rows.rows.at(-1)).toEqual({ n: 5000, pad: 'x'.repeat(1000) });
    } finally {
      c.release();
    }
  });

  it('runs each message whole whatever reads bring it, its header split too', async () => {
    // A startup message and two simple queries sent three bytes at a time: the server joins each
    // message's pieces however the reads cut them and answers each once.
    // The server serves one client at a time: the pool's idle one goes first.
    (await h.pool.connect()).release(true);
    const { host, port } = h.pool.options as { host: string; port: number };
    const socket = connect(join(host, `.s.PGSQL.${port}`));
    const received: Buffer[] = [];
    /** The backend messages answered so far: their types and bodies. */
    const messages = () => {
      const all = Buffer.concat(received);
      const out: { type: string; body: string }[] = [];
      for (let at = 0; at + 5 <= all.length;) {
        const end = at + 1 + all.readInt32BE(at + 1);
        if (end > all.length) break;
        out.push({ type: String.fromCharCode(all[at]!), body: all.toString('latin1', at + 5, end) });
        at = end;
      }
      return out;
    };
    // Ready for a query after the startup and after each of the two queries.
    const ready = new Promise<void>((done) =>
      socket.on('data', (b: Buffer) => {
        received.push(b);
        if (messages().filter((m) => m.type === 'Z').length === 3) done();
      }),
    );
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0', 'latin1');
    const startup = Buffer.alloc(8 + params.length);
    startup.writeInt32BE(startup.length, 0);
    startup.writeInt32BE(196608, 4); // protocol 3.0
    params.copy(startup, 8);
    const query = (text: string) => {
      const body = Buffer.from(`${text}\0`, 'latin1');
      const head = Buffer.from('Q\0\0\0\0', 'latin1');
      head.writeInt32BE(body.length + 4, 1);
      return Buffer.concat([head, body]);
    };
    const bytes = Buffer.concat([startup, query("select 'split-' || 41 + 1"), query("select 'whole'")]);
    try {
      await new Promise<void>((done) => socket.once('connect', done));
      for (let at = 0; at < bytes.length; at += 3)
        await new Promise<void>((done) => socket.write(bytes.subarray(at, at + 3), () => done()));
      await ready;
      const answered = messages();
      expect(answered.filter((m) => m.type === 'E')).toEqual([]);
      const rows = answered.filter((m) => m.type === 'D').map((m) => m.body);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toContain('split-42');
      expect(rows[1]).toContain('whole');
    } finally {
      socket.destroy();
    }
  });

  it('rolls back the transaction of a client that leaves in the middle of it', async () => {
    const first = await h.pool.connect();
    await first.query('begin');
    await first.query('insert into kept values ($1, $2)', [1, 'uncommitted']);
    first.release(true); // the connection closes with the transaction open
    const next = await h.pool.connect();
    try {
      const r = await next.query('select count(*)::int as n from kept where id = $1', [1]);
      expect(r.rows[0]).toEqual({ n: 0 });
      // Not inside the old transaction: a commit now finds none to commit.
      await next.query('insert into kept values ($1, $2)', [2, 'committed']);
    } finally {
      next.release();
    }
    const r = await h.pool.query('select note from kept order by id');
    expect(r.rows).toEqual([{ note: 'committed' }]);
  });

  it("ends a client's session with it: the next one prepares the same names and starts from the defaults", async () => {
    // What the pool does after its connection idled out (ten seconds by default) or broke: a new
    // connection, in a session that knows none of the old one's prepared statements or settings.
    const named = { name: 's1', text: 'select $1::int + 1 as n', values: [1] };
    const first = await h.pool.connect();
    await first.query(named);
    await first.query('set plan_cache_mode = force_generic_plan');
    first.release(true); // the connection closes
    const next = await h.pool.connect();
    try {
      await expect(next.query({ ...named, values: [41] })).resolves.toMatchObject({ rows: [{ n: 42 }] });
      const mode = await next.query('show plan_cache_mode');
      expect(mode.rows).toEqual([{ plan_cache_mode: 'auto' }]);
    } finally {
      next.release();
    }
  });

  it('serves a second client once the first one has gone, never both at once', async () => {
    const first = await h.pool.connect();
    await first.query('begin');
    await first.query('insert into kept values ($1, $2)', [3, 'first']);
    const second = client();
    const order: string[] = [];
    const secondDone = second
      .connect()
      .then(() => second.query('select note from kept where id = $1', [3]))
      .then((r) => order.push(`second saw ${r.rows.length} rows`));
    // The first client's statements still run while the second waits.
    await first.query('update kept set note = $1 where id = $2', ['first, updated', 3]);
    await first.query('commit');
    order.push('first committed');
    first.release(true);
    await secondDone;
    await second.end();
    expect(order).toEqual(['first committed', 'second saw 1 rows']);
  });
});
