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
    ...(schema ? { options: `-c search_path="${schema}",public` } : {}),
  });
  pool.on('error', (err) => log.warn({ err }, 'realtime adapter connection error'));
  const held = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => held.add(client));
  pool.on('release', (_err, client) => held.delete(client));
  io.adapter(
    createAdapter(pool, {
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

/** Resolves once the client runs no statement and has none queued, and the code awaiting its last
 * one has run (at most 5 s). */
async function statementsDone(client: pg.PoolClient): Promise<void> {
  // node-postgres keeps these on the client, outside its type declarations (pg 8's public getters
  // for them print a deprecation warning; the socket-server test's quick close fails if they move).
  const busy = () => {
    const c = client as unknown as { _activeQuery?: unknown; _queryQueue?: unknown[] };
    return Boolean(c._activeQuery) || (c._queryQueue?.length ?? 0) > 0;
  };
  for (let waited = 0; waited < 5000; waited += 10) {
    if (!busy()) {
      await new Promise((r) => setImmediate(r));
      if (!busy()) return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
