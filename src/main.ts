// Process entry: loadConfig → the embedded database's server (started first) → buildDeps →
// buildApp while the deps start → listen; a drain on SIGINT/SIGTERM.
// A start that fails for a reason the operator can fix (bad configuration, busy port, database
// unreachable, DATA_DIR in use) prints what to do on stderr, without a stack, and exits 1.
import { enableCompileCache } from 'node:module';
import { createServer } from 'node:net';
import type { BuiltApp } from './app.js';
import type { Config } from './config.js';
import type { Deps } from './deps.js';
import type { EmbeddedServer } from './platform/db/pglite-server.js';

// Node's on-disk cache of compiled code (NODE_COMPILE_CACHE, else a directory in the system's
// temporary one): a restart compiles none of the unchanged modules again (bench/RESULTS.md). On
// before the first of the service's modules is read: they are all imported below, none above.
enableCompileCache();

/** The one line for a failure the operator can fix; undefined for anything else (a bug). */
async function startFailure(err: unknown, config: Config | undefined): Promise<string | undefined> {
  const [{ ConfigError }, { DatabaseUnreachableError }, { ClusterUnusableError }, { DataDirLockedError }] =
    await Promise.all([
      import('./config.js'),
      import('./platform/db/database.js'),
      import('./platform/db/cluster-dir.js'),
      import('./platform/db/lock.js'),
    ]);
  if (err instanceof ConfigError) return err.message;
  if (err instanceof DatabaseUnreachableError || err instanceof ClusterUnusableError)
    return `cannot start: ${err.message}`;
  if (err instanceof DataDirLockedError)
    return (
      `cannot start: the embedded database in ${err.dir} is in use by process ${err.pid} (another ` +
      `server on this DATA_DIR?): stop that process, or set DATA_DIR to another directory`
    );
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (config && code === 'EADDRINUSE')
    return (
      `cannot start: port ${config.port} on ${config.host} is already in use (another server?): stop ` +
      `it, or set PORT to a free port`
    );
  if (config && code === 'EACCES')
    return `cannot start: no permission to listen on port ${config.port}: set PORT to a port above 1023`;
  if (config && code === 'EADDRNOTAVAIL')
    return `cannot start: HOST=${config.host} is not an address of this machine: set HOST (e.g. 127.0.0.1 or 0.0.0.0)`;
  return undefined;
}

/** Fails with the port's error (EADDRINUSE, EACCES, …) when it cannot be listened on now: said
 * before the database opens and migrates, not after. The real listen still decides a race. */
function probePort(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

async function main() {
  let config: Config | undefined;
  let server: Promise<EmbeddedServer> | undefined;
  let deps: Deps | undefined;
  let built: BuiltApp | undefined;
  let url: string | undefined;
  try {
    const { loadConfig } = await import('./config.js');
    config = loadConfig();
    if (config.services.includes('api')) await probePort(config.port, config.host);
    // Once the configuration and the port are known good (a start that fails on either says so at
    // once): the embedded database's server first, whose start (PGlite's, the longest step) runs
    // on its worker thread while this one loads the service's modules (a second or more).
    const { startEmbedded } = await import('./platform/db/embedded.js');
    let warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`);
    server = startEmbedded({ url: config.database.url, dataDir: config.dataDir, log: (line) => warn(line) });
    // Its failure is met where the database opens (buildDeps), not as an unhandled rejection now.
    server?.catch(() => undefined);
    const [{ createLogger }, { buildDeps }, { buildApp }] = await Promise.all([
      import('./platform/logging.js'),
      import('./deps.js'),
      import('./app.js'),
    ]);
    const log = await createLogger({ level: config.logLevel, format: config.logFormat });
    warn = (line) => log.warn(line);
    const parts = await buildDeps(config, { log, ...(server ? { starting: server } : {}) });
    deps = parts.deps;
    // The routes are built while the deps start (the first-start seeding, the job queue): the one
    // is this thread's work, the other mostly the database's. Both are done before listening.
    const [app, started] = await Promise.allSettled([buildApp(deps), parts.start()]);
    if (app.status === 'rejected') throw app.reason;
    built = app.value;
    if (started.status === 'rejected') throw started.reason;
    // The address listened on (with PORT=0, the port the system chose).
    if (config.services.includes('api'))
      url = await built.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // Release what was opened (the DATA_DIR lock above all) before saying why: the early server
    // too, which the database may not have taken over yet (stopping it twice does nothing).
    await built?.app.close().catch(() => undefined);
    await deps?.close().catch(() => undefined);
    await server?.then(
      (s) => s.stop(),
      () => undefined,
    );
    const line = await startFailure(err, config);
    process.stderr.write(
      `${line ?? `failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`}\n`,
    );
    process.exit(1);
  }
  const running = built;
  const ready = deps;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ready.log.info({ signal, graceMs: ready.config.shutdownGraceMs }, 'draining');
    // The drain (startup/shutdown.ts) is bounded by SHUTDOWN_GRACE_MS; closing after it by ten
    // seconds more, past which the process ends anyway.
    const force = setTimeout(() => process.exit(1), ready.config.shutdownGraceMs + 10_000);
    force.unref();
    try {
      const { drainAndClose } = await import('./startup/shutdown.js');
      await drainAndClose(running, ready);
      process.exit(0);
    } catch (err) {
      ready.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  if (url)
    ready.log.info(
      { url, publicUrl: config.publicUrl, database: ready.database.kind, docs: `${url}/docs` },
      'service ready',
    );
  else ready.log.info('worker ready (no HTTP API on this node)');
}

void main();
