// Runs PGlite in a worker thread behind pglite-socket on a private Unix socket, so the main
// thread's event loop never freezes for the length of a query (ARCHITECTURE.md, "Two facts about
// PGlite"). Plain JavaScript so it runs under any loader, tsx or none.
//
// workerData: { dataDir: string | null, socketPath: string, loadFrom: string | null }
// messages in:  { type: 'dump', path } → writes a tarball of the data directory, answers 'dumped'
//               { type: 'close' }      → stops the socket server, closes the database, answers 'closed'
// messages out: { type: 'ready' } | { type: 'error', message } | { type: 'dumped' } | { type: 'closed' }
import { parentPort, workerData } from 'node:worker_threads';
import { readFile, writeFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dataDir, socketPath, loadFrom } = workerData;

async function main() {
  const options = { extensions: { vector } };
  if (loadFrom) options.loadDataDir = new Blob([await readFile(loadFrom)]);
  const db = dataDir ? await PGlite.create(dataDir, options) : await PGlite.create(options);
  // One connection only: two logical transactions multiplexed on PGlite's single session
  // would interleave and row locks would protect nothing.
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 1 });
  await server.start();

  parentPort.on('message', (msg) => {
    void (async () => {
      try {
        if (msg.type === 'dump') {
          const file = await db.dumpDataDir('none');
          await writeFile(msg.path, Buffer.from(await file.arrayBuffer()));
          parentPort.postMessage({ type: 'dumped' });
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
