// Multi-node broadcast (ARCHITECTURE.md "Scale-out"): on PostgreSQL, Socket.IO uses
// @socket.io/postgres-adapter (LISTEN/NOTIFY) on a pool of its own, so a broadcast from one node
// reaches the sockets held by every node. On the embedded database there is one process, and
// the default in-memory adapter is right.
import { createAdapter } from '@socket.io/postgres-adapter';
import pg from 'pg';
import type { Server as SocketServer } from 'socket.io';
import type { Deps } from '../../deps.js';

/** Attaches the adapter that fits the database; returns the function that releases it. */
export function attachRealtimeAdapter(
  io: SocketServer,
  deps: Pick<Deps, 'database' | 'config' | 'log'>,
): () => Promise<void> {
  const { database, config, log } = deps;
  if (database.kind !== 'postgres' || !config.database.url) return async () => undefined;
  const schema = database.schema;
  // One connection stays LISTENing; the others publish. Never the application's pool: a held
  // LISTEN connection must not starve requests.
  const pool = new pg.Pool({
    connectionString: config.database.url,
    max: 3,
    ...(schema ? { options: `-c search_path="${schema}",public` } : {}),
  });
  pool.on('error', (err) => log.warn({ err }, 'realtime adapter connection error'));
  io.adapter(
    createAdapter(pool, {
      // NOTIFY channels are database-wide; deployments (or test schemas) sharing one database
      // must not hear each other's broadcasts.
      channelPrefix: `socket.io#${schema ?? 'public'}`,
      errorHandler: (err) => log.warn({ err }, 'realtime adapter error'),
    }),
  );
  return async () => {
    await pool.end().catch(() => undefined);
  };
}
