// Worker thread of bench/realtime.ts: holds the /observer subscribers, so their socket work does
// not run on the server's event loop, and measures each delivery's latency against the send
// time the ingesting request carried (metadata.sentAt, same process clock).
//
// Two clients (workerData.client):
// - 'plain' (the default): Node's own WebSocket client (no socket.io-client) speaking the
//   Engine.IO v4 / Socket.IO v5 wire protocol itself: the Engine.IO open packet, the namespace's CONNECT with the handshake's
//   auth, pong for each ping, and each EVENT packet (`42/observer,[name, payload]`) decoded with
//   JSON.parse when its frame arrives; the latency is taken then. What socket.io-client does on
//   top (its debug build's calls, emitters, the packet object) is left out: at 20,000 frames/s it
//   cost the shared cores a good part of what the service had.
// - 'socket.io': socket.io-client, one Manager per socket (forceNew), as before November 25.
import { parentPort, workerData } from 'node:worker_threads';
import { io } from 'socket.io-client';

const { url, token, observerIds, perObserver, client = 'plain' } = workerData;
const NSP = '/observer';
const now = () => performance.timeOrigin + performance.now();
let latencies = [];
let foreign = 0;
const sockets = [];

function onEvent(observerId, name, payload) {
  if (name !== 'timeline_update') return;
  if (payload.observerId !== observerId) foreign++;
  latencies.push(now() - payload.metadata.sentAt);
}

/** One subscriber over a plain WebSocket; resolves once the namespace accepted it. */
function connectWs(observerId) {
  return new Promise((resolve, reject) => {
    // Node's global WebSocket (undici's; stable since Node 22).
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`);
    const eventPrefix = `42${NSP},`;
    let connected = false;
    ws.addEventListener('message', ({ data: msg }) => {
      if (msg.startsWith(eventPrefix)) {
        const [name, payload] = JSON.parse(msg.slice(eventPrefix.length));
        onEvent(observerId, name, payload);
      } else if (msg === '2') ws.send('3');
      else if (msg[0] === '0') ws.send(`40${NSP},${JSON.stringify({ token, observerId })}`);
      else if (msg.startsWith(`40${NSP},`)) {
        connected = true;
        resolve(undefined);
      } else if (msg.startsWith(`44${NSP},`)) reject(new Error(`connect_error ${msg}`));
    });
    ws.addEventListener('error', (ev) => (connected ? undefined : reject(new Error(String(ev.message)))));
    sockets.push({ close: () => ws.close() });
  });
}

/** One subscriber through socket.io-client. */
function connectSocketIo(observerId) {
  return new Promise((resolve, reject) => {
    const s = io(`${url}${NSP}`, {
      auth: { token, observerId },
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
    });
    s.on('timeline_update', (e) => onEvent(observerId, 'timeline_update', e));
    s.once('connect', () => resolve(undefined));
    s.once('connect_error', (err) => reject(err));
    sockets.push({ close: () => s.disconnect() });
  });
}

async function connectAll() {
  const connect = client === 'socket.io' ? connectSocketIo : connectWs;
  const all = [];
  for (const observerId of observerIds) for (let i = 0; i < perObserver; i++) all.push(observerId);
  for (let i = 0; i < all.length; i += 50) await Promise.all(all.slice(i, i + 50).map(connect));
}

parentPort.on('message', (msg) => {
  if (msg === 'collect') {
    const { user, system } = process.threadCpuUsage();
    parentPort.postMessage({ type: 'latencies', latencies, foreign, cpuMs: (user + system) / 1000 });
    latencies = [];
    foreign = 0;
  } else if (msg === 'close') {
    for (const s of sockets) s.close();
    parentPort.postMessage({ type: 'closed' });
  }
});

connectAll().then(
  () => parentPort.postMessage({ type: 'ready', count: sockets.length }),
  (err) => parentPort.postMessage({ type: 'error', message: String(err?.message ?? err) }),
);
