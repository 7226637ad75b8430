// Runs PGlite in a worker thread and serves it on a private Unix socket with the PostgreSQL wire
// protocol, so the main thread's event loop never freezes for the length of a query
// (ARCHITECTURE.md, "Two facts about PGlite"). Plain JavaScript so it runs under any loader, tsx
// or none.
//
// The socket server is ours rather than pglite-socket's: that one hands PGlite each protocol
// message in its own call (an extended-protocol statement is four or five: bind, describe,
// execute, sync), each with its own turn of the event loop, lock and write; here every complete
// message a read brought goes to PGlite in one call and its answer out in one write
// (bench/pglite-roundtrip.ts measures a statement's round trip; figures in bench/RESULTS.md).
//
// workerData: { dataDir: string | null, socketPath: string, loadFrom: string | null,
//               emptyCluster: string | null, keepEmptyClusterAt: string | null }
//   dataDir: a data directory holding a cluster (cluster-dir.ts lays a new one down), or null for
//   one in memory, which the other three make: loadFrom: a tarball to start from (and to reset
//   to); emptyCluster: a new cluster starts from this tarball of an empty one instead of running
//   initdb; keepEmptyClusterAt: a new cluster made by initdb is kept there as a tarball before
//   anything writes to it (empty-cluster.ts).
// messages in:  { type: 'dump', path } → writes a tarball of the data directory, answers 'dumped'
//               { type: 'reset' }      → (loadFrom only) drops its clients and swaps the database
//                                        for a fresh copy of the tarball, answers 'reset'
//               { type: 'close' }      → stops the socket server, closes the database, answers 'closed'
// messages out: { type: 'ready' } | { type: 'error', message } | { type: 'dumped' } | { type: 'reset' }
//               | { type: 'closed' }
import { parentPort, workerData } from 'node:worker_threads';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';

const { dataDir, socketPath, loadFrom, emptyCluster, keepEmptyClusterAt } = workerData;

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const GSS_REQUEST = 80877104;

/** The length of the complete protocol messages at the start of `buf` (0 if none is complete).
 * Before the startup message, messages have no type byte. */
function completeLength(buf, started) {
  let end = 0;
  for (;;) {
    const head = started ? 1 : 0;
    if (buf.length < end + head + 4) return end;
    const length = head + buf.readInt32BE(end + head);
    if (buf.length < end + length) return end;
    end += length;
    if (!started) return end; // the pre-startup messages are handled one by one
  }
}

/** One client at a time (the main thread's pool has exactly one): two logical transactions
 * multiplexed on PGlite's single session would interleave and row locks would protect nothing.
 * A client that connects while another is attached (the pool replacing a broken one) waits for
 * it to go. */
function serve(database, path) {
  let current = null;
  // Settles once the current client's close is handled (its open transaction rolled back).
  let released = Promise.resolve();
  const waiting = [];
  const attach = (socket) => {
    current = socket;
    let release;
    released = new Promise((done) => (release = done));
    // The database of this client: a reset swaps it only once every client is gone.
    const db = database();
    let started = false;
    // The bytes read and not yet run. A large message (a batch of embeddings is megabytes) comes
    // in many reads: they are kept apart and joined once the first message is complete, so its
    // bytes are copied once, not once per read.
    let parts = [];
    let size = 0;
    // Batches run one after another, in the order the bytes came.
    let chain = Promise.resolve();
    const run = async (batch) => {
      // Corked: the answer's pieces (one per backend message) leave in one write.
      socket.cork();
      try {
        await db.runExclusive(() =>
          db.execProtocolRawStream(batch, {
            onRawData: (data) => {
              if (!socket.destroyed) socket.write(Buffer.from(data));
            },
          }),
        );
      } finally {
        socket.uncork();
      }
    };
    /** The first message's length, once its header is in (Infinity before). */
    const firstLength = () => {
      const head = started ? 1 : 0;
      if (size < head + 4) return Infinity;
      if (parts[0].length < head + 4) parts = [Buffer.concat(parts, size)];
      return head + parts[0].readInt32BE(head);
    };
    const onData = (chunk) => {
      parts.push(chunk);
      size += chunk.length;
      if (size < firstLength()) return;
      let pending = parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
      while (pending.length) {
        const length = completeLength(pending, started);
        if (length === 0) break;
        const batch = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (!started) {
          const code = batch.length >= 8 ? batch.readInt32BE(4) : 0;
          if (code === SSL_REQUEST || code === GSS_REQUEST) {
            socket.write('N'); // no encryption on a private Unix socket
            continue;
          }
          if (code === CANCEL_REQUEST) continue; // not supported
          started = true;
        }
        chain = chain.then(() => run(batch)).catch((err) => socket.destroy(err));
      }
      parts = pending.length ? [pending] : [];
      size = pending.length;
    };
    socket.on('data', onData);
    socket.resume(); // a socket that waited its turn was paused: its bytes come now
    socket.once('close', () => {
      // The next client gets a session of its own, as a PostgreSQL connection would: nothing of
      // this one's stays open or named. PGlite has one session for all of them, so a transaction
      // left open is rolled back, and the prepared statements, settings and cursors are dropped
      // (a pool's new connection names its statements from the start again).
      void chain
        .then(async () => {
          if (db.isInTransaction()) await db.exec('ROLLBACK');
          await db.exec('DISCARD ALL');
        })
        .catch(() => undefined)
        .finally(() => {
          current = null;
          release();
          let next;
          while ((next = waiting.shift()) && next.destroyed);
          if (next) attach(next);
        });
    });
  };
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    if (current) {
      socket.pause();
      waiting.push(socket);
    } else attach(socket);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve({
        stop: () =>
          new Promise((done) => {
            current?.destroy();
            server.close(() => done());
          }),
        /** Disconnects every client (a reset's: they belonged to the app that has closed) and
         * settles once the last one's close is handled. */
        dropClients: async () => {
          for (const socket of waiting.splice(0)) socket.destroy();
          current?.destroy();
          await released;
        },
      });
    });
  });
}

/** Writes the new cluster's tarball aside, then renames it into place, so that processes starting
 * together never load half a file. A failure costs only the next start's speed. */
async function keepEmptyCluster(db, path) {
  const aside = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    const file = await db.dumpDataDir('none');
    await writeFile(aside, Buffer.from(await file.arrayBuffer()));
    await rename(aside, path);
  } catch {
    await unlink(aside).catch(() => undefined);
  }
}

async function main() {
  // btree_gin: memory full text indexed by owner (migration 0104).
  const options = { extensions: { vector, btree_gin } };
  if (loadFrom) options.loadDataDir = new Blob([await readFile(loadFrom)]);
  // The empty cluster's 40 MB are not kept in `options` (only a tarball to reset to is).
  const first =
    !loadFrom && emptyCluster
      ? { ...options, loadDataDir: new Blob([await readFile(emptyCluster)]) }
      : options;
  let db = dataDir ? await PGlite.create(dataDir, first) : await PGlite.create(first);
  if (keepEmptyClusterAt) await keepEmptyCluster(db, keepEmptyClusterAt);
  const server = await serve(() => db, socketPath);

  parentPort.on('message', (msg) => {
    void (async () => {
      try {
        if (msg.type === 'dump') {
          const file = await db.dumpDataDir('none');
          await writeFile(msg.path, Buffer.from(await file.arrayBuffer()));
          parentPort.postMessage({ type: 'dumped' });
        } else if (msg.type === 'reset') {
          // A fresh PGlite in this thread: the tarball is in memory and PGlite's code loaded,
          // which is most of what starting a worker costs.
          if (!loadFrom) throw new Error('only a database loaded from a tarball can be reset');
          await server.dropClients();
          const old = db;
          db = await PGlite.create(options);
          await old.close();
          parentPort.postMessage({ type: 'reset' });
        } else if (msg.type === 'close') {
          await server.stop();
          await db.close();
          parentPort.postMessage({ type: 'closed' });
        }
      } catch (err) {
        parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
  parentPort.postMessage({ type: 'ready' });
}

main().catch((err) => {
  parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.stack : String(err) });
});
