// Which database a configuration names (a PostgreSQL server, or the embedded PGlite on DATA_DIR or
// in memory), and the embedded one's server started. Light on purpose: main.ts imports it before
// the service's modules and starts the server first, so that PGlite's start, the longest step of
// a start, runs on its worker thread while the main thread loads them.
import { resolve } from 'node:path';
import { startEmbeddedServer, type EmbeddedServer } from './pglite-server.js';

export function isPostgresUrl(url: string | undefined): boolean {
  return Boolean(url && /^postgres(ql)?:\/\//.test(url));
}

/** DATA_DIR/pglite, or undefined for a database in memory (memory://). */
export function embeddedDir(opts: { url: string | undefined; dataDir: string }): string | undefined {
  return opts.url?.startsWith('memory://') ? undefined : resolve(opts.dataDir, 'pglite');
}

/** The embedded database's server, starting now; undefined when `url` names a PostgreSQL server.
 * openDatabase takes it over (its `starting` option). */
export function startEmbedded(opts: {
  url: string | undefined;
  dataDir: string;
  log?: ((line: string) => void) | undefined;
}): Promise<EmbeddedServer> | undefined {
  if (isPostgresUrl(opts.url)) return undefined;
  return startEmbeddedServer({ dataDir: embeddedDir(opts) ?? null, log: opts.log });
}
