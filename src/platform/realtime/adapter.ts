// Multi-node broadcast (ARCHITECTURE.md "Scale-out"): on PostgreSQL, Socket.IO uses
// @socket.io/postgres-adapter (LISTEN/NOTIFY) on a pool of its own, so a broadcast from one node
// reaches the sockets held by every node. On the embedded database there is one process, and
// the default in-memory adapter is right.
import { createAdapter } from '@socket.io/postgres-adapter';
import pg from 'pg';
import type { Server as SocketServer } from 'socket.io';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/database.js';

/** Attaches the adapter that fits the database; returns the function that releases it, to be
 * called after the Socket.IO server is closed. */
export function attachRealtimeAdapter(
  io: SocketServer,
  { database, url, log }: { database: DatabaseHandle; url: string | undefined; log: Logger },
): () => Promise<void> {
  if (database.kind !== 'postgres' || !url) return async () => undefined;
  const schema = database.schema;
  // One connection stays LISTENing; the others publish. Never the application's pool: a held
  // LISTEN connection must not starve requests.
  const pool = new pg.Pool({
    connectionString: url,
    max: 3,
    Client: CountingClient,
    ...(schema ? { options: `-c search_path="${schema}",public` } : {}),
  });
  pool.on('error', (err) => log.warn({ err }, 'realtime adapter connection error'));
  const held = new Set<pg.PoolClient>();
  const listened = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client) => {
    held.add(client);
    // The adapter holds its LISTEN connection checked out with no 'error' listener, so a dropped
    // connection (PostgreSQL restarting, a network cut) was an uncaught exception that ended the
    // process; heard here, the connection's 'end' makes the adapter reconnect.
    if (listened.has(client)) return;
    listened.add(client);
    client.on('error', (err) => log.warn({ err }, 'realtime adapter connection lost'));
  });
  pool.on('release', (_err, client) => held.delete(client));
  io.adapter(
    createAdapter(coalescingNotifies(pool), {
      // NOTIFY channels are database-wide; deployments (or test schemas) sharing one database
      // must not hear each other's broadcasts.
      channelPrefix: `socket.io#${schema ?? 'public'}`,
      errorHandler: (err) => log.warn({ err }, 'realtime adapter error'),
    }),
  );
  return async () => {
    // Called after io.close(), which closed the adapter and released its LISTEN connection, unless
    // the adapter was still setting that connection up (it takes it asynchronously at start, and
    // keeps it only once connected and its LISTEN statements are done): closed meanwhile, as when a
    // node stops right after it started, it keeps it for good and pool.end() would wait forever.
    // Such a connection is ended here once its statements are done (without the adapter's
    // reconnection), as is one still connecting once it is handed over.
    for (let waited = 0; pool.totalCount > pool.idleCount && waited < 5000; waited += 10) {
      for (const client of held) {
        await statementsDone(client);
        // A publishing statement's client goes back to the pool by itself once done.
        if (!held.has(client)) continue;
        client.removeAllListeners('end');
        client.release(true);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await pool.end().catch(() => undefined);
  };
}

/** The adapter's publishing statement: one NOTIFY per broadcast. */
const NOTIFY = 'SELECT pg_notify($1, $2)';
/** NOTIFYs sent in one statement at most (each payload is at most the adapter's 8,000 bytes). */
const NOTIFY_BATCH = 100;

interface Notice {
  channel: string;
  payload: string;
  ok: () => void;
  fail: (err: unknown) => void;
}

/** The pool as the adapter sees it, its NOTIFYs coalesced: those it issues in one turn of the
 * event loop (a commit's broadcasts, published one after another) go out as one statement, in
 * the order issued, so PostgreSQL delivers them in that order as separate notifications, and each
 * publish resolves when its statement is done. A statement is one transaction, in which
 * PostgreSQL delivers identical notifications once: a repeated channel and payload starts the next
 * statement, sent once the one before it is done. Everything else goes to the pool unchanged. */
export function coalescingNotifies(pool: pg.Pool): pg.Pool {
  let pending: Notice[] = [];
  const send = async (batch: Notice[]) => {
    try {
      if (batch.length === 1) await pool.query(NOTIFY, [batch[0]!.channel, batch[0]!.payload]);
      else
        await pool.query('SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS t(c, p)', [
          batch.map((n) => n.channel),
          batch.map((n) => n.payload),
        ]);
      batch.forEach((n) => n.ok());
    } catch (err) {
      batch.forEach((n) => n.fail(err));
    }
  };
  const flush = async () => {
    const all = pending;
    pending = [];
    const batches: Notice[][] = [[]];
    const seen = new Set<string>();
    for (const n of all) {
      const key = `${n.channel}\u0000${n.payload}`;
      if (seen.has(key) || batches.at(-1)!.length === NOTIFY_BATCH) {
        batches.push([]);
        seen.clear();
      }
      batches.at(-1)!.push(n);
      seen.add(key);
    }
    // One after another: statements on different connections could be delivered out of order.
    for (const batch of batches) await send(batch);
  };
  const query = (text: unknown, values?: unknown[]) => {
    if (text !== NOTIFY || !values) return pool.query(text as string, values);
    return new Promise<void>((ok, fail) => {
      if (pending.length === 0) queueMicrotask(() => void flush());
      pending.push({ channel: String(values[0]), payload: String(values[1]), ok, fail });
    });
  };
  // The adapter uses the pool's `connect` (its LISTEN connection) and `query` alone.
  return { connect: () => pool.connect(), query } as unknown as pg.Pool;
}

/** The adapter's connections: each counts its statements not yet answered, so that shutdown can
 * tell when a connection's are done (node-postgres keeps its queue to itself). */
class CountingClient extends pg.Client {
  running = 0;

  // Every form of pg's `query` the adapter and the pool use: with a callback (the pool's own
  // `query`, the NOTIFYs) or a promise (the adapter's LISTENs).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads, passed through
  override query(...args: any[]): any {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called on this client below
    const query = super.query as (this: pg.Client, ...a: unknown[]) => unknown;
    const last: unknown = args.at(-1);
    if (typeof last === 'function') {
      this.running++;
      args[args.length - 1] = (...answer: unknown[]) => {
        this.running--;
        return (last as (...a: unknown[]) => unknown)(...answer);
      };
      return query.apply(this, args);
    }
    const sent = query.apply(this, args);
    if (sent instanceof Promise) {
      this.running++;
      const done = () => void this.running--;
      sent.then(done, done);
    }
    return sent;
  }
}

/** Resolves once the client runs no statement and has none queued, and the code awaiting its last
 * one has run (at most 5 s). */
async function statementsDone(client: pg.PoolClient): Promise<void> {
  const busy = () => (client as unknown as CountingClient).running > 0;
  for (let waited = 0; waited < 5000; waited += 10) {
    if (!busy()) {
      await new Promise((r) => setImmediate(r));
      if (!busy()) return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
