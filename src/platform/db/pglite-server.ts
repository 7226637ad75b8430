// The embedded database's server: PGlite in a worker thread (pglite-worker.mjs), served on a
// private Unix socket that the process's pool connects to. A process normally starts one and
// stops it with its database; the test harness keeps its servers between test apps and resets
// them to the template, since starting a worker costs more than most test files' own work.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { findCached } from '../machine-cache.js';
import { clusterReady, makeAgain, prepareCluster, type ClusterSource } from './cluster-dir.js';
import { emptyCluster, emptyClusterPlaces } from './empty-cluster.js';
import { acquireDataDirLock, type DataDirLock } from './lock.js';

export interface EmbeddedServer {
  /** The directory holding the socket (a `pg` client's `host`) and the socket's port. */
  socketDir: string;
  port: number;
  /** Writes a tarball of the data directory (used for the test template). */
  dumpTo(path: string): Promise<void>;
  /** Back to the tarball it was loaded from (only a server whose cluster `loadFrom` made): its
   * clients are disconnected and a fresh PGlite takes over the socket. */
  reset(): Promise<void>;
  stop(): Promise<void>;
  /** Why it no longer serves (stopped, or its worker ended by itself: the socket went with it),
   * else null. */
  gone(): string | null;
}

export interface EmbeddedServerOptions {
  /** The data directory, locked for this process; null keeps the database in memory. */
  dataDir: string | null;
  /** A new cluster starts from this data-directory tarball instead of an empty cluster (a data
   * directory that holds a cluster already opens as it is: PGlite loads no tarball over one). */
  loadFrom?: string | undefined;
  /** Where the machine's empty cluster is kept (empty-cluster.ts; tests name their own). */
  emptyClusterPlaces?: string[];
  /** Where a data directory made again is said (default: stderr). */
  log?: ((line: string) => void) | undefined;
}

type Reply = 'ready' | 'dumped' | 'reset' | 'closed';

function spawnWorker(workerData: Record<string, unknown>) {
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
    workerData,
    // The worker is plain JavaScript: none of the process's flags, tsx's loader hooks among them
    // (they cost 0.3-0.4 s of a 2 s start on this machine).
    execArgv: [],
    name: 'pglite', // the thread's name in ps and /proc (bench/chat.ts reads its CPU time)
  });
  const waitFor = (type: Reply) =>
    new Promise<void>((ok, fail) => {
      const onMessage = (msg: { type: string; message?: string }) => {
        if (msg.type === type) {
          cleanup();
          ok();
        } else if (msg.type === 'error') {
          cleanup();
          fail(new Error(`embedded database: ${msg.message}`));
        }
      };
      const onExit = (code: number) => {
        cleanup();
        fail(new Error(`embedded database worker exited with code ${code}`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
    });
  const ask = async (message: { type: string; path?: string }, reply: Reply) => {
    const done = waitFor(reply);
    worker.postMessage(message);
    await done;
  };
  return { worker, waitFor, ask };
}

/** The tarball a new cluster on disk is made from: `loadFrom`, else the machine's kept empty
 * cluster, made (by initdb, in memory) and kept when there is none yet. */
async function clusterTarball(opts: EmbeddedServerOptions): Promise<Buffer> {
  if (opts.loadFrom) return readFile(opts.loadFrom);
  const places = opts.emptyClusterPlaces ?? emptyClusterPlaces();
  const kept = findCached(places);
  if (kept) return readFile(kept);
  const maker = await startEmbeddedServer({ dataDir: null, emptyClusterPlaces: places });
  try {
    const made = findCached(places);
    if (made) return await readFile(made);
    // No place to keep it could be written: this start's copy only.
    const aside = join(maker.socketDir, 'empty-cluster.tar');
    await maker.dumpTo(aside);
    return await readFile(aside);
  } finally {
    await maker.stop();
  }
}

export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const { dataDir } = opts;
  let lock: DataDirLock | undefined;
  let source: ClusterSource | undefined;
  if (dataDir) {
    mkdirSync(dirname(dataDir), { recursive: true });
    lock = acquireDataDirLock(dataDir);
    let tarball: Promise<Buffer> | undefined;
    source = {
      tarball: () => (tarball ??= clusterTarball(opts)),
      log: opts.log ?? ((line) => process.stderr.write(`${line}\n`)),
    };
    try {
      if (!clusterReady(dataDir)) await prepareCluster(dataDir, source);
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  // A private directory (0700) holds the socket: only this user's processes can connect.
  const socketDir = mkdtempSync(join(tmpdir(), `apdb-${randomBytes(4).toString('hex')}-`));
  const port = 5432;
  const socketPath = join(socketDir, `.s.PGSQL.${port}`);
  // On disk the cluster is there now (cluster-dir.ts). In memory a new cluster starts from
  // `loadFrom`, else from the machine's kept empty one, or keeps it (empty-cluster.ts).
  const loadFrom = dataDir ? null : (opts.loadFrom ?? null);
  const fresh = !dataDir && !loadFrom ? emptyCluster(opts.emptyClusterPlaces) : {};
  const workerData = {
    dataDir,
    socketPath,
    loadFrom,
    emptyCluster: fresh.load ?? null,
    keepEmptyClusterAt: fresh.keepAt ?? null,
  };
  // On a data directory that holds its cluster, reached without awaiting anything: the worker is
  // spawned within main.ts's call, before the module loading that follows takes the thread.
  let { worker, waitFor, ask } = spawnWorker(workerData);

  const release = () => {
    lock?.release();
    rmSync(socketDir, { recursive: true, force: true });
  };
  try {
    try {
      await waitFor('ready');
    } catch (err) {
      await worker.terminate();
      if (!dataDir || !source) throw err;
      // A cluster PGlite cannot open is made again if it holds no data (else a clear refusal).
      const first = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
      await makeAgain(
        dataDir,
        `PGlite could not open it: ${first.replace(/^embedded database: /, '')}`,
        source,
      );
      ({ worker, waitFor, ask } = spawnWorker(workerData));
      await waitFor('ready');
    }
  } catch (err) {
    await worker.terminate();
    release();
    throw err;
  }

  let stopped = false;
  let lost: string | null = null;
  let lastError: string | undefined;
  // A worker that ends by itself takes its socket with it: every later connection fails. Say why,
  // once, so the cause is in the log rather than only a missing socket file.
  worker.on('error', (err) => (lastError = err.stack ?? err.message));
  worker.on('exit', (code) => {
    if (stopped) return;
    lost = `embedded database worker ended (exit code ${code})${lastError ? `: ${lastError}` : ''}`;
    (opts.log ?? ((line) => process.stderr.write(`${line}\n`)))(lost);
    release();
  });
  return {
    socketDir,
    port,
    dumpTo: (path) => ask({ type: 'dump', path }, 'dumped'),
    reset: () => ask({ type: 'reset' }, 'reset'),
    gone: () => (stopped ? 'stopped' : lost),
    async stop() {
      if (stopped) return;
      stopped = true;
      const done = ask({ type: 'close' }, 'closed').catch(() => undefined);
      await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
      await worker.terminate();
      release();
    },
  };
}
