// Worker thread of bench/realtime.ts: holds the /observer subscribers, so their socket work does
// not run on the server's event loop, and measures each delivery's latency against the send
// time the ingesting request carried (metadata.sentAt, same process clock).
import { parentPort, workerData } from 'node:worker_threads';
import { io } from 'socket.io-client';

const { url, token, observerIds, perObserver } = workerData;
const now = () => performance.timeOrigin + performance.now();
let latencies = [];
let foreign = 0;
const sockets = [];

async function connectAll() {
  const all = [];
  for (const observerId of observerIds) for (let i = 0; i < perObserver; i++) all.push(observerId);
  for (let i = 0; i < all.length; i += 50) {
    await Promise.all(
      all.slice(i, i + 50).map(
        (observerId) =>
          new Promise((resolve, reject) => {
            const s = io(`${url}/observer`, {
              auth: { token, observerId },
              transports: ['websocket'],
              forceNew: true,
              reconnection: false,
            });
            s.on('timeline_update', (e) => {
              if (e.observerId !== observerId) foreign++;
              latencies.push(now() - e.metadata.sentAt);
            });
            s.once('connect', () => resolve(undefined));
            s.once('connect_error', (err) => reject(err));
            sockets.push(s);
          }),
      ),
    );
  }
}

parentPort.on('message', (msg) => {
  if (msg === 'collect') {
    parentPort.postMessage({ type: 'latencies', latencies, foreign });
    latencies = [];
    foreign = 0;
  } else if (msg === 'close') {
    for (const s of sockets) s.disconnect();
    parentPort.postMessage({ type: 'closed' });
  }
});

connectAll().then(
  () => parentPort.postMessage({ type: 'ready', count: sockets.length }),
  (err) => parentPort.postMessage({ type: 'error', message: String(err?.message ?? err) }),
);
