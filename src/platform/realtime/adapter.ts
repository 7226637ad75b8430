// Multi-node broadcast (ARCHITECTURE.md "Scale-out"): on PostgreSQL, Socket.IO uses
// @socket.io/postgres-adapter (LISTEN/NOTIFY) on a pool of its own, so a broadcast from one node
// reaches the sockets held by every node. On the embedded database there is one process, and
// the default in-memory adapter is right.
import { createAdapter } from '@socket.io/postgres-adapter';
import pg from 'pg';
import type { Server as SocketServer } from 'socket.io';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/database.js';

/** How long shutdown waits for the adapter to give its LISTEN connection back. */
const RELEASE_WAIT_MS = 5000;

/** Attaches the adapter that fits the database; returns the function that releases it, to be
 * called after the Socket.IO server is closed. */
export function attachRealtimeAdapter(
  io: SocketServer,
  { database, url, log }: { database: DatabaseHandle; url: string | undefined; log: Logger },
): () => Promise<void> {
  if (database.kind !== 'postgres' || !url) return async () => undefined;
  const schema = database.schema;
  // Never the application's pool: a held LISTEN connection must not starve requests. Two
  // connections: the adapter holds one LISTENing, and every NOTIFY takes the other in the order
  // published (the pool hands its connection to waiters first come, first served), so the other
  // nodes hear a node's broadcasts in the order it sent them. While the LISTEN connection is made
  // again (PostgreSQL restarted), two NOTIFYs may run at once and arrive out of order.
  const pool = new pg.Pool({
    connectionString: url,
    max: 2,
    ...(schema ? { options: `-c search_path="${schema}",public` } : {}),
  });
  pool.on('error', (err) => log.warn({ err }, 'realtime adapter connection error'));
  // The adapter holds its LISTEN connection checked out with no 'error' listener, so a dropped
  // connection (PostgreSQL restarting, a network cut) would be an uncaught exception that ends the
  // process; heard here, the connection's 'end' makes the adapter reconnect. The adapter then
  // drops the ended connection without giving it back to the pool, which would count it for good:
  // no connection left for the NOTIFYs, and shutdown waiting for it forever. One still checked out
  // once pg has failed its statements (the pool's own `query` gives its connection back then) is
  // given back here.
  const held = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => held.add(client));
  pool.on('release', (_err, client) => held.delete(client));
  pool.on('connect', (client) => {
    client.on('error', (err) => log.warn({ err }, 'realtime adapter connection lost'));
    client.on('end', () =>
      setImmediate(() => {
        if (held.has(client)) client.release(true);
      }),
    );
  });
  io.adapter(
    createAdapter(pool, {
      // NOTIFY channels are database-wide; deployments (or test schemas) sharing one database
      // must not hear each other's broadcasts.
      channelPrefix: `socket.io#${schema ?? 'public'}`,
      errorHandler: (err) => log.warn({ err }, 'realtime adapter error'),
    }),
  );
  return async () => {
    // Called after io.close(), which closed the adapter: it released its LISTEN connection, unless
    // it was still acquiring it (a node stopped right after it started). The adapter then keeps
    // the connection once it has it, and pool.end() would wait forever; closing the adapter again
    // releases it (and publishes its close to the other nodes once more). A statement the server
    // still has not answered after RELEASE_WAIT_MS keeps pool.end() waiting for it.
    for (let waited = 0; pool.totalCount > pool.idleCount && waited < RELEASE_WAIT_MS; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      if (pool.totalCount > pool.idleCount) void io.of('/').adapter.close();
    }
    await pool.end().catch(() => undefined);
  };
}
