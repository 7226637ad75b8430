// Real-time delivery (issue 4): 1,000 /observer subscribers across 10 observers (in a worker
// thread), events ingested through POST /api/sync/ingest-event with an API key at a steady
// (open-loop) rate by a child process (realtime-ingest.mjs: the load generator never runs on the
// service's event loop), latency from the moment the HTTP request is sent to the socket event, and
// deliveries per second. Targets: p99 < 100 ms at 2,000 deliveries/s (issue 4) and at 20,000
// deliveries/s, 200 events/s (issue 19), on both databases.
// The subscribers (`--client`): `plain` (the default since November 25), Node's own WebSocket
// client speaking the Engine.IO / Socket.IO wire protocol, each event decoded (JSON.parse) as its
// frame arrives; `socket.io`, socket.io-client (the figures before November 25). Both measure the
// same span: the ingest request's send time to the event's receipt by a subscriber. Also reported:
// the CPU time of the service's main thread (HTTP, database client, Socket.IO; PGlite runs in a
// thread of its own) and of the subscribers' thread per 1,000 deliveries.
// Run: npx tsx bench/realtime.ts [--rates 2000,5000,10000] [--seconds 10] [--client plain|socket.io]
//      [--webhook] (DATABASE_URL → Postgres)
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { dropSchema } from '../test/schema.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '2000,5000,10000' },
    seconds: { type: 'string', default: '10' },
    client: { type: 'string', default: 'plain' },
    // An enabled webhook for every event: each ingest then also writes a delivery and its job in
    // its transaction (never sent: this node runs no workers).
    webhook: { type: 'boolean', default: false },
  },
});
const rates = values.rates.split(',').map(Number);
const seconds = Number(values.seconds);
const client = values.client;
if (client !== 'plain' && client !== 'socket.io') throw new Error('--client is plain or socket.io');
const OBSERVERS = 10;
const PER_OBSERVER = 100;
const run = promisify(execFile);

const pgUrl = process.env.DATABASE_URL;
const schema = pgUrl ? `bench_${randomBytes(4).toString('hex')}` : undefined;
const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  ...(pgUrl ? { DATABASE_URL: pgUrl } : embeddedDataDir()),
  DB_SCHEMA: schema,
  SERVICES: 'api',
  // The subscribers are one account's (1,000 sockets), above the per-account limit's default.
  SOCKETS_PER_USER: '100000',
  ...(values.webhook ? { SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true' } : {}),
});
const deps = await createDeps(config);
const { app } = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const cso = await deps.services.users.create({
  email: `bench-${randomBytes(4).toString('hex')}@example.test`,
  password: null,
  role: 'cso',
  accountType: 'public',
});
const { accessToken } = await deps.services.auth.issue(cso, 'api');
const { key } = await deps.services.auth.createApiKey('bench', ['sync:write'], null);
const player = await deps.services.users.create({ email: null, password: null, name: 'player' });
const observerIds: number[] = [];
for (let i = 0; i < OBSERVERS; i++)
  observerIds.push(
    (await deps.services.instances.create({ name: `bench-${i}`, level: 8, source: 'portal' }, cso.id)).id,
  );

if (values.webhook)
  await deps.services.webhooks.create({ url: 'http://127.0.0.1:9/bench', eventTypes: ['*'] }, cso.id);

const worker = new Worker(new URL('./realtime-subscribers.mjs', import.meta.url), {
  workerData: { url, token: accessToken, observerIds, perObserver: PER_OBSERVER, client },
});
const fromWorker = (type: string) =>
  new Promise<Record<string, unknown>>((resolve, reject) => {
    const on = (msg: Record<string, unknown>) => {
      if (msg.type === type) {
        worker.off('message', on);
        resolve(msg);
      } else if (msg.type === 'error') reject(new Error(String(msg.message)));
    };
    worker.on('message', on);
  });
const ready = await fromWorker('ready');
console.error(`${String(ready.count)} subscribers (${client}) connected on ${deps.database.kind}`);

function pct(sorted: number[], p: number) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

const results = [];
// A short unrecorded warm-up (JIT, connection and statement caches) at the first rate.
const phases = [
  { rate: rates[0]!, secs: 3, record: false },
  ...rates.map((rate) => ({ rate, secs: seconds, record: true })),
];
/** CPU time (user + system) of the calling thread, in ms. */
const threadCpuMs = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};
let subscriberCpuBefore = 0;
for (const { rate, secs, record } of phases) {
  const serverCpuBefore = threadCpuMs();
  const { stdout } = await run(process.execPath, [
    fileURLToPath(new URL('./realtime-ingest.mjs', import.meta.url)),
    JSON.stringify({ url, key, userId: player.id, observerIds, rate: rate / PER_OBSERVER, seconds: secs }),
  ]);
  const {
    total,
    sendSeconds: sendDuration,
    httpErrors,
    httpLatency,
  } = JSON.parse(stdout) as {
    total: number;
    sendSeconds: number;
    httpErrors: number;
    httpLatency: number[];
  };
  await new Promise((r) => setTimeout(r, 1000)); // let the last deliveries land
  worker.postMessage('collect');
  const { latencies, foreign, cpuMs } = (await fromWorker('latencies')) as unknown as {
    latencies: number[];
    foreign: number;
    cpuMs: number;
  };
  // The service's main thread and the subscribers' thread, CPU ms per 1,000 deliveries: less
  // sensitive than latency to what else the shared machine runs.
  const serverCpuMs = threadCpuMs() - serverCpuBefore;
  const subscriberCpuMs = cpuMs - subscriberCpuBefore;
  subscriberCpuBefore = cpuMs;
  if (!record) continue;
  latencies.sort((a, b) => a - b);
  httpLatency.sort((a, b) => a - b);
  results.push({
    db: deps.database.kind,
    client,
    targetDeliveriesPerSec: rate,
    eventsPerSec: Math.round((total / sendDuration) * 10) / 10,
    delivered: latencies.length,
    expected: total * PER_OBSERVER,
    deliveriesPerSec: Math.round(latencies.length / sendDuration),
    p50ms: +pct(latencies, 50).toFixed(1),
    p99ms: +pct(latencies, 99).toFixed(1),
    maxMs: +pct(latencies, 100).toFixed(1),
    httpP50ms: +pct(httpLatency, 50).toFixed(1),
    httpP99ms: +pct(httpLatency, 99).toFixed(1),
    httpErrors,
    foreignDeliveries: foreign,
    serverCpuMsPer1k: +((serverCpuMs / latencies.length) * 1000).toFixed(1),
    subscriberCpuMsPer1k: +((subscriberCpuMs / latencies.length) * 1000).toFixed(1),
  });
  console.error(JSON.stringify(results.at(-1)));
}
console.table(results);

worker.postMessage('close');
await fromWorker('closed');
await worker.terminate();
await app.close();
await deps.close();
if (pgUrl && schema) await dropSchema(pgUrl, schema);
process.exit(0);
