// The load generator: a process of its own (forked by bench/system.ts, commands over IPC), the
// receivers in a worker thread of it (delivery.ts). It seeds the population, then runs the mix
// open-loop at the base rates times the load: HTTP operations and timeline ingest on a 20 ms
// ticker (each request to the next node through the balancer), workflow flows, chat clients on
// their own timers. It remembers every acknowledged write (memory ids, currency idempotency
// keys, ingested event ids by observer) and checks them at the end.
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startCommandWorker } from '../worker-commands.js';
import { Balancer } from './balancer.js';
import { connectChatClients, type ChatClient } from './chat-clients.js';
import type { DeliveryCommand } from './delivery.js';
import { flow, type FlowContext } from './flows.js';
import { BASE_RATES, BENCH_EVENT, benchDatabaseUrl, type HttpOp, type Options } from './options.js';
import { pgSampler } from './postgres.js';
import { prng } from '../prng.js';
import { eachLimit, memoryText, seed, seedHooks, TOPICS, type Population } from './seed.js';
import { Stats } from './stats.js';

export type LoadCommand =
  | { cmd: 'seed'; urls: string[] }
  | { cmd: 'warm' }
  | { cmd: 'start' }
  | { cmd: 'load'; load: number }
  | { cmd: 'snapshot'; reset: boolean }
  | { cmd: 'killed' }
  | { cmd: 'finish' };

const now = () => performance.timeOrigin + performance.now();
const o = JSON.parse(process.argv[2]!) as Options;
const runStart = performance.now();
const stats = new Stats(runStart);
const say = (line: string) => process.stderr.write(`loadgen: ${line}\n`);
const send = (m: unknown) => process.send!(m);

let lb: Balancer;
let pop: Population;
let delivery: Awaited<ReturnType<typeof startCommandWorker<DeliveryCommand>>>;
let clients: ChatClient[] = [];
let load = o.load;
let running = false;
let ticker: NodeJS.Timeout | undefined;
let killedAt: number | undefined;
const loop = monitorEventLoopDelay({ resolution: 10 });

// Acknowledged writes.
const ackedMemories: number[] = [];
const ackedKeys: string[] = [];
const ackedEvents: Record<string, number[]> = {};
const inflight = new Map<string, number>();
const flowCtx = (): FlowContext => ({
  lb,
  adminToken: pop.adminToken,
  recent,
  stopped: () => !running,
});
const recent: FlowContext['recent'] = [];
let n = 0;
const rnd = prng(43);
const anyUser = () => pop.users[Math.floor(rnd() * pop.users.length)]!;
const topic = () => TOPICS[Math.floor(rnd() * TOPICS.length)]!;

/** What each operation of the mix sends. */
const ops: Record<HttpOp | 'ingest' | 'workflow.flow', () => Promise<unknown>> = {
  'memory.search': () =>
    lb.request(
      'memory.search',
      'GET',
      `/api/assistant/memory?${new URLSearchParams({ query: `the ${topic()} and the ${topic()}`, limit: '10' })}`,
      {
        token: anyUser().token,
      },
    ),
  'memory.write': async () => {
    const u = anyUser();
    const r = await lb.request('memory.write', 'POST', '/api/assistant/memory', {
      token: u.token,
      expect: 201,
      body: { content: memoryText(u.id, 1_000_000 + n++, o.memoryChars), source: 'shared' },
    });
    if (r) ackedMemories.push(r.json.id);
  },
  'profile.read': () => lb.request('profile.read', 'GET', '/api/user/profile', { token: anyUser().token }),
  'inventory.read': () => lb.request('inventory.read', 'GET', '/api/inventory', { token: anyUser().token }),
  'currency.change': async () => {
    const key = randomUUID();
    const body = { userId: anyUser().id, amount: 1 + Math.floor(rnd() * 10) };
    const o2 = { token: pop.adminToken, body, headers: { 'idempotency-key': key } };
    const r = await lb.request('currency.change', 'POST', '/api/inventory/modify', o2);
    if (!r) return;
    ackedKeys.push(key);
    // One in ten is sent again, as a client that lost the answer would: the first answer again.
    if (rnd() < 0.1) {
      const again = await lb.request('currency.replay', 'POST', '/api/inventory/modify', o2);
      if (again && again.headers.get('idempotent-replayed') !== 'true')
        stats.error('currency.replay', 'not replayed');
    }
  },
  suggestions: async () => {
    const f = recent[Math.floor(rnd() * recent.length)];
    if (f) await lb.request('suggestions', 'GET', `/api/suggestions/${f.id}`, { token: f.user.token });
  },
  ingest: async () => {
    const inst = pop.instances[n % pop.instances.length]!;
    const r = await lb.request('ingest', 'POST', '/api/sync/ingest-event', {
      apiKey: pop.apiKey,
      expect: 201,
      body: {
        userId: pop.users[n++ % pop.users.length]!.id,
        eventType: BENCH_EVENT,
        eventText: `bench event ${n} at the ${topic()}`,
        metadata: { instanceId: inst.id, sentAt: now() },
      },
    });
    if (r) (ackedEvents[String(inst.observerId)] ??= []).push(r.json.id);
  },
  'workflow.flow': () => flow(flowCtx(), anyUser(), n++),
};

const rates = (): Record<keyof typeof ops, number> => ({
  ...BASE_RATES,
  ingest: o.ingestRate,
  'workflow.flow': o.workflowRate,
});

/** Open loop: each op's due requests every 20 ms, whatever the answers' speed (a backlog over
 * 2,000 in flight is counted as an error instead of sent). */
function tick(acc: Record<string, number>, last: { t: number }) {
  const t = performance.now();
  const dt = (t - last.t) / 1000;
  last.t = t;
  for (const [op, rate] of Object.entries(rates())) {
    acc[op] = (acc[op] ?? 0) + rate * load * dt;
    while (acc[op] >= 1) {
      acc[op]--;
      const busy = inflight.get(op) ?? 0;
      if (busy >= 2000) {
        stats.error(op, 'client backlog');
        continue;
      }
      inflight.set(op, busy + 1);
      void ops[op as keyof typeof ops]()
        .catch((err: unknown) => stats.error(op, String(err)))
        .finally(() => inflight.set(op, (inflight.get(op) ?? 1) - 1));
    }
  }
}

/** The chat clients' pause between turns, at the current load. */
const turnInterval = () => (1000 * (o.turnMinSeconds + rnd() * (o.turnMaxSeconds - o.turnMinSeconds))) / load;

async function handle(c: LoadCommand): Promise<unknown> {
  switch (c.cmd) {
    case 'seed': {
      lb = new Balancer(c.urls, stats);
      pop = await seed(o, lb, say);
      // The first id of the run: the receivers count ids from it.
      const probe = await lb.must('seed.probe', 'POST', '/api/sync/ingest-event', {
        apiKey: pop.apiKey,
        body: { userId: pop.users[0]!.id, eventType: 'system_bench_probe', metadata: {} },
      });
      delivery = await startCommandWorker<DeliveryCommand>(new URL('./delivery.ts', import.meta.url));
      const started = await delivery.send<{ webhookUrl: string; connected: number }>({
        cmd: 'start',
        urls: c.urls,
        token: pop.adminToken,
        observerIds: pop.observerIds,
        webhooks: o.webhooks,
        sockets: o.observerSockets,
        baseId: probe.id,
      });
      await seedHooks(pop, lb, started.webhookUrl, o.webhooks);
      clients = await connectChatClients(o.chatClients, pop.users, lb, stats, turnInterval);
      say(`${started.connected} observer sockets and ${clients.length} chat clients connected`);
      return { seedSeconds: pop.seedSeconds, users: pop.users.length, observers: pop.observerIds };
    }
    case 'warm': {
      // One memory search per user on each node, outside the figures: each node's sketch index
      // (a cache of the users searched, bounded) is full when the measurement starts, so memory
      // growth over the run is growth, not the cache filling.
      const t0 = performance.now();
      for (const url of lb.urls)
        await eachLimit(pop.users, 8, async (u) => {
          const res = await fetch(`${url}/api/assistant/memory?query=the+${topic()}&limit=10`, {
            headers: { authorization: `Bearer ${u.token}` },
          });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`warm-up search: ${res.status}`);
        });
      return { seconds: (performance.now() - t0) / 1000 };
    }
    case 'start': {
      running = true;
      loop.enable();
      const acc: Record<string, number> = {};
      const last = { t: performance.now() };
      ticker = setInterval(() => tick(acc, last), 20);
      // The first turns spread over one pause at the current load, as if the clients had been
      // talking for a while.
      for (const cl of clients) cl.start(rnd() * turnInterval());
      return null;
    }
    case 'load':
      load = c.load;
      return null;
    case 'killed':
      killedAt = performance.now();
      return null;
    case 'snapshot': {
      const s = stats.snapshot(c.reset);
      const d = await delivery.send<any>({ cmd: 'collect', reset: c.reset });
      const own = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
      if (c.reset) loop.reset();
      return { stats: s, delivery: d, loadgenLoop: own, switches: switches(d.reconnects) };
    }
    case 'finish':
      return finish();
  }
}

/** After a kill: how the clients moved to the surviving node (seconds after the kill). */
function switches(observerReconnects: { lostAt: number; connectedAt: number; recovered: number }[]) {
  if (killedAt === undefined) return null;
  const k = killedAt;
  const after = (t: number | undefined) => (t === undefined ? null : (t - k) / 1000);
  const chat = clients.flatMap((c) => c.switches);
  // The worker's times are on the same clock origin (performance.timeOrigin + now()).
  const kAbs = performance.timeOrigin + k;
  return {
    killedAtSecond: (k - runStart) / 1000,
    http: { failedAfter: after(lb.failedAt), servedAgainAfter: after(lb.servedAgainAt) },
    chat: {
      moved: chat.length,
      reconnectedAfter: chat.map((s) => after(s.connectedAt)),
      servedAfter: chat.map((s) => after(s.servedAt)),
    },
    observers: {
      moved: observerReconnects.length,
      reconnectedAfter: observerReconnects.map((r) => (r.connectedAt - kAbs) / 1000),
      recovered: observerReconnects.reduce((m, r) => m + r.recovered, 0),
    },
  };
}

async function finish() {
  running = false;
  clearInterval(ticker);
  for (const cl of clients) cl.stop();
  // Let what is in flight end, then wait for the receivers to catch up (webhooks retry).
  const t0 = performance.now();
  while ([...inflight.values()].some((v) => v > 0) && performance.now() - t0 < 60_000)
    await new Promise((r) => setTimeout(r, 200));
  let verify: any;
  for (let waited = 0; waited <= 60; waited += 2) {
    verify = await delivery.send<any>({ cmd: 'verify', expected: ackedEvents });
    const missing = [...verify.sockets, ...verify.webhooks].reduce((m: number, r: any) => m + r.missing, 0);
    if (missing === 0) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const pgc = await pgSampler(benchDatabaseUrl(o), o.database);
  try {
    const events = Object.values(ackedEvents).flat();
    return {
      delivery: verify,
      acked: { memories: ackedMemories.length, currency: ackedKeys.length, events: events.length },
      lost: {
        memories: (await pgc.missing('memories', ackedMemories)).length,
        events: (await pgc.missing('timeline_events', events)).length,
        currency: await pgc.ledger(ackedKeys),
      },
      webhookDeliveries: await pgc.deliveries(),
      scheduledRuns: await pgc.scheduledRuns(),
    };
  } finally {
    await pgc.close();
    await delivery.close();
  }
}

// The orchestrator gone (killed): nothing to report to.
process.on('disconnect', () => process.exit(1));
process.on('message', (m: { id: number } & LoadCommand) => {
  handle(m).then(
    (result) => send({ id: m.id, result }),
    (err: unknown) =>
      send({ id: m.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
