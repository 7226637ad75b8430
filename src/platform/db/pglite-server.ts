// The embedded database's server: PGlite in a worker thread (pglite-worker.mjs), served on a
// private Unix socket that the process's pool connects to. A process normally starts one and
// stops it with its database; the test harness keeps its servers between test apps and resets
// them to the template, since starting a worker costs more than most test files' own work.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { emptyCluster, isNewCluster } from './empty-cluster.js';
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
}

export interface EmbeddedServerOptions {
  /** The data directory, locked for this process; null keeps the database in memory. */
  dataDir: string | null;
  /** A new cluster starts from this data-directory tarball instead of an empty cluster (a data
   * directory that holds a cluster already opens as it is: PGlite loads no tarball over one). */
  loadFrom?: string | undefined;
  /** Where the machine's empty cluster is kept (empty-cluster.ts; tests name their own). */
  emptyClusterPlaces?: string[];
}

type Reply = 'ready' | 'dumped' | 'reset' | 'closed';

export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const { dataDir } = opts;
  let lock: DataDirLock | undefined;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    lock = acquireDataDirLock(dataDir);
  }
  // A private directory (0700) holds the socket: only this user's processes can connect.
  const socketDir = mkdtempSync(join(tmpdir(), `apdb-${randomBytes(4).toString('hex')}-`));
  const port = 5432;
  const socketPath = join(socketDir, `.s.PGSQL.${port}`);
  // A new cluster starts from `loadFrom`, else from the machine's kept empty one, or keeps it
  // (empty-cluster.ts).
  const isNew = isNewCluster(dataDir);
  const loadFrom = isNew ? (opts.loadFrom ?? null) : null;
  const fresh = isNew && !loadFrom ? emptyCluster(opts.emptyClusterPlaces) : {};
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
    workerData: {
      dataDir,
      socketPath,
      loadFrom,
      emptyCluster: fresh.load ?? null,
      keepEmptyClusterAt: fresh.keepAt ?? null,
    },
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

  const release = () => {
    lock?.release();
    rmSync(socketDir, { recursive: true, force: true });
  };
  try {
    await waitFor('ready');
  } catch (err) {
    await worker.terminate();
    release();
    throw err;
  }

  let stopped = false;
  return {
    socketDir,
    port,
    dumpTo: (path) => ask({ type: 'dump', path }, 'dumped'),
    reset: () => ask({ type: 'reset' }, 'reset'),
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
