// Worker thread of the load generator: everything that receives events. The /observer sockets
// (Node's WebSocket speaking the Engine.IO / Socket.IO wire protocol, as bench/realtime-subscribers.mjs
// does, each event decoded as its frame arrives) and the webhook receiver, so their work never
// delays the requests the main thread times. Latency: receipt − the ingest request's send time
// (metadata.sentAt). A socket whose node goes away connects to another node, then reads the
// events it may have missed from the observer's timeline (GET …/timeline?order=asc&from=), since
// the namespace's handshake has no resume cursor; those count as recovered, not as delivered live.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './body.js';
import { answerCommands } from '../worker-commands.js';
import { IdSet } from './bitset.js';
import { BENCH_EVENT } from './options.js';
import { Latency } from './stats.js';

const NSP = '/observer';
const now = () => performance.timeOrigin + performance.now();

export type DeliveryCommand =
  | {
      cmd: 'start';
      urls: string[];
      token: string;
      observerIds: number[];
      webhooks: boolean;
      sockets: number;
      baseId: number;
    }
  | { cmd: 'collect'; reset: boolean }
  | { cmd: 'verify'; expected: Record<string, number[]> }
  | { cmd: 'close' };

interface Receiver {
  observerId: number;
  seen: IdSet;
  recovered: number;
}

interface ObserverSocket extends Receiver {
  node: number;
  ws: WebSocket | undefined;
  closing: boolean;
  lastTimelineAt: string | undefined;
  reconnects: { lostAt: number; connectedAt: number; recovered: number }[];
}

let urls: string[] = [];
let token = '';
const sockets: ObserverSocket[] = [];
const webhooks = new Map<number, Receiver>();
const live = new Latency();
/** From the event's timeline_at (stamped at its insert, before the commit) to the socket: the
 * delivery without the ingest's queue. */
const fanout = new Latency();
const hooked = new Latency();
const down = new Set<number>();
let server: ReturnType<typeof createServer> | undefined;

function onEvent(s: ObserverSocket, e: any, recovered: boolean) {
  if (e.eventType !== BENCH_EVENT) return;
  if (!s.seen.add(Number(e.id))) return;
  if (!s.lastTimelineAt || e.timelineAt > s.lastTimelineAt) s.lastTimelineAt = e.timelineAt;
  if (recovered) s.recovered++;
  else if (typeof e.metadata?.sentAt === 'number') {
    live.record(now() - e.metadata.sentAt);
    fanout.record(now() - Date.parse(e.timelineAt));
  }
}

/** Connects `s` to node `node`; resolves once the namespace admitted it. */
function connect(s: ObserverSocket, node: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${urls[node]!.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`);
    const prefix = `42${NSP},`;
    let open = false;
    // A handshake not answered in 10 s is given up (the caller tries again).
    const timer = setTimeout(() => {
      if (!open) ws.close();
    }, 10_000);
    ws.addEventListener('message', ({ data }) => {
      const msg = String(data);
      if (msg.startsWith(prefix)) {
        const [name, payload] = JSON.parse(msg.slice(prefix.length));
        if (name === 'timeline_update') onEvent(s, payload, false);
      } else if (msg === '2') ws.send('3');
      else if (msg[0] === '0') ws.send(`40${NSP},${JSON.stringify({ token, observerId: s.observerId })}`);
      else if (msg.startsWith(`40${NSP},`)) {
        open = true;
        clearTimeout(timer);
        s.ws = ws;
        s.node = node;
        resolve();
      } else if (msg.startsWith(`44${NSP},`)) reject(new Error(`connect_error ${msg}`));
    });
    ws.addEventListener('error', () => (open ? undefined : reject(new Error('websocket error'))));
    ws.addEventListener('close', () => {
      if (!open) reject(new Error('closed before admitted'));
      else if (!s.closing) void reconnect(s);
    });
  });
}

/** The node went away: connect to the next one that takes us, then read the gap. */
async function reconnect(s: ObserverSocket) {
  const lostAt = now();
  down.add(s.node);
  s.ws = undefined;
  for (let attempt = 0; !s.closing; attempt++) {
    const order = urls.map((_, k) => (s.node + 1 + k) % urls.length).filter((k) => !down.has(k));
    const node = order[attempt % Math.max(1, order.length)] ?? (s.node + 1) % urls.length;
    try {
      await connect(s, node);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const connectedAt = now();
  const before = s.recovered;
  await backfill(s).catch((err: unknown) => process.stderr.write(`backfill failed: ${String(err)}\n`));
  s.reconnects.push({ lostAt, connectedAt, recovered: s.recovered - before });
}

/** Reads the observer's bench events from a little before the last one seen, oldest first. */
async function backfill(s: ObserverSocket) {
  // A margin: an event committed after the last one seen may carry an earlier timeline_at (it is
  // stamped inside its transaction), so read a few seconds back and let the id set drop repeats.
  const from = new Date(new Date(s.lastTimelineAt ?? 0).getTime() - 5000).toISOString();
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ order: 'asc', from, limit: '200', eventType: BENCH_EVENT });
    if (cursor) q.set('cursor', cursor);
    const res = await fetch(`${urls[s.node]}/api/observer/observer/${s.observerId}/timeline?${q}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.status !== 200) throw new Error(`timeline ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { events: unknown[]; nextCursor: string | null };
    for (const e of page.events) onEvent(s, e, true);
    cursor = page.nextCursor;
  } while (cursor);
}

/** The webhook receiver: /hook/<observerId>, 204 for everything. */
async function startReceiver(): Promise<string> {
  server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      res.writeHead(204).end();
      const observerId = Number((req.url ?? '').split('/')[2]);
      const r = webhooks.get(observerId);
      const body = JSON.parse(raw);
      const e = body.data;
      if (!r || e?.eventType !== BENCH_EVENT) return;
      if (r.seen.add(Number(e.id)) && typeof e.metadata?.sentAt === 'number')
        hooked.record(now() - e.metadata.sentAt);
    });
  });
  await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const figures = (l: Latency) => ({ n: l.count, p50: l.percentile(50), p99: l.percentile(99), max: l.max });

answerCommands<DeliveryCommand>({}, async (c) => {
  switch (c.cmd) {
    case 'start': {
      urls = c.urls;
      token = c.token;
      for (const observerId of c.webhooks ? c.observerIds : [])
        webhooks.set(observerId, { observerId, seen: new IdSet(c.baseId), recovered: 0 });
      for (let k = 0; k < c.sockets; k++)
        sockets.push({
          observerId: c.observerIds[k % c.observerIds.length]!,
          node: k % urls.length,
          ws: undefined,
          closing: false,
          lastTimelineAt: undefined,
          seen: new IdSet(c.baseId),
          recovered: 0,
          reconnects: [],
        });
      for (let k = 0; k < sockets.length; k += 10)
        await Promise.all(sockets.slice(k, k + 10).map((s) => connect(s, s.node)));
      return { webhookUrl: await startReceiver(), connected: sockets.length };
    }
    case 'collect': {
      const out = {
        observer: figures(live),
        fanout: figures(fanout),
        webhook: figures(hooked),
        connected: sockets.filter((s) => s.ws).length,
        reconnects: sockets.flatMap((s) => s.reconnects),
      };
      if (c.reset) {
        live.reset();
        fanout.reset();
        hooked.reset();
      }
      return out;
    }
    case 'verify': {
      const ids = (observerId: number) => c.expected[String(observerId)] ?? [];
      return {
        sockets: sockets.map((s, k) => ({
          socket: k,
          observerId: s.observerId,
          node: s.node,
          expected: ids(s.observerId).length,
          missing: s.seen.missing(ids(s.observerId)),
          recovered: s.recovered,
          duplicates: s.seen.duplicates,
        })),
        webhooks: [...webhooks.values()].map((w) => ({
          observerId: w.observerId,
          expected: ids(w.observerId).length,
          missing: w.seen.missing(ids(w.observerId)),
          duplicates: w.seen.duplicates,
        })),
      };
    }
    case 'close': {
      for (const s of sockets) {
        s.closing = true;
        s.ws?.close();
      }
      server?.closeAllConnections();
      server?.close();
      return null;
    }
  }
});
