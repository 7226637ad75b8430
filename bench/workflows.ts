// Workflows under load (issue 20): --instances workflow instances (default 1,000) driven through a
// whole documentation flow at once, --parallel at a time (default: all): create → triage →
// approval (→ execution, which starts an orchestrator run of 3 tasks from context.tasks) → the run
// completes (the client hears `workflow_run_finished` on the root observer's `/observer` socket, as
// a console would, instead of polling) → evidence (→ integration) → a review of each artifact →
// approval (→ completed).
// The load generator (HTTP clients) and the OpenAI-compatible model server, answering at once,
// run in a worker thread, off the service's event loop.
// Reports: transitions per second (state changes over the flow phase's wall time, waiting for runs
// included), each write's p50/p99 (named by the state it moves the instance to; "every
// transition": all of those together), and the orchestrator's own overhead per task (each task run's
// time as the orchestrator measured it, from before its claim to its finish's writing statement,
// minus its model call's time; before 2026-11-25 night the time stopped before the finish; since
// 2026-11-26 a run's first `concurrency` tasks are claimed together and their time starts there;
// since 2026-11-26 morning a call starts before its claim commits, and the finish's locked read
// is part of its writing statement).
// Also: the statements and NOTIFYs the service's process sent per flow, and its event-loop delay;
// what the waiting is made of: its waits for a pool connection, and the round trips of its
// row-locked instance reads (the lock's wait included) and of its other statements; the CPU per
// flow of the service's thread (and how busy its event loop was) and of the PostgreSQL backends
// serving it (Linux); a task's claim and finish step by step (pool wait, each statement's round
// trip; on a pipelined connection a statement's round trip includes its wait behind those sent
// before it); the load generator's event-loop delay, and each write request's time inside the
// service (received → answer sent, from the audit log), to tell the service's part of a
// request's time from the load generator's;
// WF_TRACE=1 prints every statement (first 160 characters, after where it comes from) to stderr
// (with --instances 1: one flow's statements in order); WF_SLOW=<ms> prints each state-moving write
// slower than that, when it started and its longest statement (to line up with vmstat's seconds).
// Run: npx tsx bench/workflows.ts [--instances 1000] [--parallel N] [--think-ms M] [--only pglite|postgres]
// Runs on PGlite, and on PostgreSQL too when DATABASE_URL is set. Talks only to 127.0.0.1.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { type AddressInfo, Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { sql } from 'kysely';
import pg from 'pg';
import { io } from 'socket.io-client';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { SuggestionsService } from '../src/modules/suggestions/index.js';
import { WorkflowOrchestrator, WorkflowsService } from '../src/modules/workflows/index.js';
import { startFakeModelServer } from '../test/fake-model-server.js';
import { onEachDatabase } from './databases.js';
import { pct } from './percentile.js';
import { answerCommands, startCommandWorker } from './worker-commands.js';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '1000' },
    parallel: { type: 'string' },
    'think-ms': { type: 'string', default: '0' },
    only: { type: 'string' },
  },
});
const INSTANCES = Number(values.instances);
const PARALLEL = Number(values.parallel ?? values.instances);
// A person or an agent between two steps of a flow: each request waits a uniform random time with
// this mean first (0: each flow sends its next request as soon as the last answered, so the
// latencies are queueing at saturation). The think time is not part of any latency.
const THINK_MS = Number(values['think-ms']);

// ---- load generator (worker thread) -------------------------------------------------------------

interface FlowCommand {
  cmd: 'flow';
  url: string;
  tokens: string[];
  adminToken: string;
  rootObserverId: number;
}
type Command = FlowCommand | { cmd: 'close' };

async function loadGenerator() {
  const fake = await startFakeModelServer();
  answerCommands<Command>(fake.env(), async (m) => (m.cmd === 'close' ? fake.close() : flows(m)));
}

async function flows(c: FlowCommand) {
  const times: Record<string, number[]> = {};
  let failures = 0;
  let transitions = 0;
  // Runs end as `workflow_run_finished` timeline events on the root observer's room.
  const finished = new Map<string, () => void>();
  const ended = new Set<string>();
  const observer = io(`${c.url}/observer`, {
    transports: ['websocket'],
    auth: { token: c.adminToken, observerId: c.rootObserverId },
  });
  observer.on('timeline_update', (e: { eventType: string; metadata: { runId?: string } }) => {
    if (e.eventType !== 'workflow_run_finished' || !e.metadata.runId) return;
    ended.add(e.metadata.runId);
    finished.get(e.metadata.runId)?.();
  });
  await new Promise<void>((ok, fail) => {
    observer.once('connect', ok);
    observer.once('connect_error', fail);
  });
  const runFinished = (runId: string) =>
    ended.has(runId) ? Promise.resolve() : new Promise<void>((ok) => finished.set(runId, ok));
  let requests = 0;
  const call = async (kind: string, token: string, method: string, path: string, body?: unknown) => {
    if (THINK_MS > 0) await new Promise((r) => setTimeout(r, Math.random() * 2 * THINK_MS));
    requests++;
    const t0 = performance.now();
    const res = await fetch(c.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json: any = await res.json();
    (times[kind] ??= []).push(performance.now() - t0);
    if (res.status >= 400) throw new Error(`${kind}: ${res.status} ${json.code} ${json.detail}`);
    return json;
  };
  const one = async (n: number) => {
    const token = c.tokens[n % c.tokens.length]!;
    const i = await call('create', token, 'POST', '/api/protocol/instances', {
      machineId: 'documentation_flow_v1',
      context: {
        title: `Bench ${n}`,
        tasks: [
          { title: 'Docs', specialty: 'docs' },
          { title: 'Code', specialty: 'code' },
          { title: 'Tests', specialty: 'tests' },
        ],
      },
    });
    await call('transition', token, 'POST', `/api/protocol/instances/${i.id}/transition`, {
      targetState: 'triage',
    });
    const exec = await call(
      'approve → execution',
      c.adminToken,
      'POST',
      `/api/protocol/instances/${i.id}/approvals`,
      {},
    );
    transitions += 2;
    const runId = exec.instance.activeRunId;
    await runFinished(runId);
    const run = await call('getRun', token, 'GET', `/api/protocol/runs/${runId}`);
    if (run.status !== 'completed') throw new Error(`run ${runId} ended ${run.status}`);
    const ev = await call(
      'evidence → integration',
      token,
      'POST',
      `/api/protocol/instances/${i.id}/evidence`,
      {
        description: 'demo',
        proofUrl: 'https://demo.invalid/',
      },
    );
    if (ev.advanced) transitions++;
    const { artifacts } = await call(
      'listArtifacts',
      token,
      'GET',
      `/api/protocol/instances/${i.id}/artifacts`,
    );
    for (const a of artifacts)
      await call('review', token, 'POST', `/api/protocol/artifacts/${a.id}/review`, { approve: true });
    const done = await call(
      'approve → completed',
      c.adminToken,
      'POST',
      `/api/protocol/instances/${i.id}/approvals`,
      {},
    );
    if (done.instance.state === 'completed') transitions++;
  };
  // The load generator's own event-loop delay: it is part of each request's measured time.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, INSTANCES) }, async () => {
      for (let n = next++; n < INSTANCES; n = next++)
        await one(n).catch((err: unknown) => {
          failures++;
          if (failures <= 3) process.stderr.write(`flow ${n} failed: ${String(err)}\n`);
        });
    }),
  );
  const wallSec = (performance.now() - started) / 1000;
  loop.disable();
  observer.close();
  // Every request that moves the instance to its next state (each of these does, in this flow).
  times['every transition'] = [
    'transition',
    'approve → execution',
    'evidence → integration',
    'approve → completed',
  ].flatMap((k) => times[k] ?? []);
  const summary = Object.fromEntries(
    Object.entries(times).map(([k, xs]) => [k, { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) }]),
  );
  const clientLoop = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  return { wallSec, transitions, requests, failures, summary, clientLoop };
}

// ---- the service (main thread) ------------------------------------------------------------------

// Every statement the service's process sends (its pool, the job queue's, the realtime adapter's
// NOTIFYs, the change feed), counted where node-postgres sends them; only on the main thread.
// What a task's time holds besides its statements: each wait for a pool connection, and each
// round trip (sent → answered, the event loop's delay in reading the answer included) of the
// row-locked instance reads every write starts with (FOR UPDATE or, a task's claim and finish,
// FOR SHARE; the lock's wait included) and of the others.
let statements = 0;
let notifies = 0;
/** Writes (system calls) on the service's sockets: its database connections, HTTP and sockets. */
let socketWrites = 0;
// Where the statements come from: the orchestrator's runs and the suggestion passes (their calls
// marked below), the job queue's own (pg-boss's: enqueue, fetch, complete, maintenance), NOTIFYs,
// and the rest: the requests, the account checks, the change feed.
const origin = new AsyncLocalStorage<string>();
const byOrigin = new Map<string, number>();
/** Calls of the marked methods (runs executed, suggestion passes' jobs handled). */
const callsOf = new Map<string, number>();
let counting = false;
let timing = false;
const waits = {
  pool: [] as number[],
  lockedInstanceRead: [] as number[],
  otherStatement: [] as number[],
  // The two transactions of a task's run, whole (connection, locks, statements, commit): its
  // claim, and its finish (whose writing statement ends the task's measured time).
  taskClaim: [] as number[],
  taskFinish: [] as number[],
  // A run's seeding transaction, whole: it also claims the run's first wave when it created the
  // tasks (then no `claim` runs for them).
  seedWithWave: [] as number[],
};
/** A state-moving write's call of the workflows service (transition, approve, evidence), from
 * its call to its answer: its time on the database (some statement of it in flight; statements
 * sent together count once), its pool waits, and the rest (its CPU, and its turns waiting for the
 * event loop); and its round trips (statements sent together count once). */
interface Anatomy {
  open: number;
  busySince: number;
  db: number;
  pool: number;
  /** Round trips: how often the write went from no statement in flight to one. */
  trips: number;
  /** Its longest statement (`step`), and that statement's round trip. */
  longest: string;
  longestMs: number;
}
const writeCall = new AsyncLocalStorage<Anatomy>();
const anatomies = new Map<string, (Anatomy & { total: number })[]>();
/** Inside a task's claim or finish (the bench's `time` below): which one, for `steps`. */
const phase = new AsyncLocalStorage<string>();
/** The claim's and the finish's round trips by step ("claim: select workflow_tasks"), and their
 * pool waits: where those transactions' time goes. */
const steps = new Map<string, number[]>();
const step = (text: string) => {
  const t = text.replace(/\s+/g, ' ').trim();
  // A locked read names its table last (after any subquery's), other statements first.
  const locked = /for (update|share)$/i.exec(t);
  const tables = [...t.matchAll(/(?:from|into|update) "?([\w.]+)"?/gi)].map((m) => m[1]!);
  const table = (locked ? tables.at(-1) : tables[0])?.replace(/^.*_boss\./, 'pg-boss ');
  return `${t.split(' ')[0]!.toLowerCase()}${table ? ` ${table}` : ''}${locked ? ` (${locked[0]})` : ''}`;
};
const stepTime = (key: string, ms: number) => {
  let xs = steps.get(key);
  if (!xs) steps.set(key, (xs = []));
  xs.push(ms);
};
// The PostgreSQL server processes serving this process's connections (their pids, from the
// connections' startup), for their CPU time (Linux: /proc; none elsewhere, or a server on another
// machine).
const backendPids = new Set<number>();
/** CPU seconds a process has used, or undefined when it cannot be read (gone, not Linux). */
function cpuSecondsOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (100/s)
  } catch {
    return undefined;
  }
}
/** Sums the CPU the backends used since `start`: each is sampled every second, so one that exits
 * counts up to its last sample. */
function backendCpu() {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = () => {
    for (const pid of backendPids) {
      const s = cpuSecondsOf(pid);
      if (s === undefined) continue;
      if (!first.has(pid)) first.set(pid, s);
      last.set(pid, s);
    }
  };
  sample();
  const timer = setInterval(sample, 1000);
  return () => {
    clearInterval(timer);
    sample();
    let sum = 0;
    for (const [pid, s] of last) sum += s - first.get(pid)!;
    return sum;
  };
}
if (isMainThread) {
  for (const k of ['_write', '_writev'] as const) {
    const proto = Socket.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const f = proto[k]!;
    proto[k] = function (this: unknown, ...a: unknown[]) {
      if (counting) socketWrites++;
      return f.apply(this, a);
    };
  }
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its pool below
  const connect = pg.Pool.prototype.connect as (this: pg.Pool, ...args: unknown[]) => unknown;
  pg.Pool.prototype.connect = function (this: pg.Pool, ...args: unknown[]) {
    const r = connect.apply(this, args);
    if (timing && args.length === 0 && r instanceof Promise) {
      const t0 = performance.now();
      const inPhase = phase.getStore();
      const inWrite = writeCall.getStore();
      void r
        .then(() => {
          waits.pool.push(performance.now() - t0);
          if (inPhase) stepTime(`${inPhase}: pool wait`, performance.now() - t0);
          if (inWrite) inWrite.pool += performance.now() - t0;
        })
        .catch(() => undefined);
    }
    return r;
  } as typeof pg.Pool.prototype.connect;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its client below
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    statements++;
    const pid = (this as unknown as { processID: number | null }).processID;
    if (pid) backendPids.add(pid);
    const q = args[0] as string | { text?: string } | undefined;
    const text = typeof q === 'string' ? q : q?.text;
    const notify = !!text && /notify/i.test(text.slice(0, 40));
    if (notify) notifies++;
    if (counting) {
      const from = notify
        ? 'NOTIFY'
        : text && /_boss"?\.|pgboss\./.test(text)
          ? 'job queue (pg-boss)'
          : (origin.getStore() ?? 'requests and the rest');
      byOrigin.set(from, (byOrigin.get(from) ?? 0) + 1);
    }
    if (process.env.WF_TRACE)
      process.stderr.write(
        `SQL [${origin.getStore() ?? '-'}] ${String(text).replace(/\s+/g, ' ').slice(0, 160)}\n`,
      );
    const r = query.apply(this, args);
    if (timing && text && r instanceof Promise) {
      const into = /^select .* from "workflow_instances" .*for (update|share)$/s.test(text)
        ? waits.lockedInstanceRead
        : waits.otherStatement;
      const t0 = performance.now();
      const inPhase = phase.getStore();
      const inWrite = writeCall.getStore();
      if (inWrite && inWrite.open++ === 0) {
        inWrite.busySince = t0;
        inWrite.trips++;
      }
      void r
        .then(() => {
          into.push(performance.now() - t0);
          if (inPhase) stepTime(`${inPhase}: ${step(text)}`, performance.now() - t0);
        })
        .catch(() => undefined)
        .finally(() => {
          if (!inWrite) return;
          const now = performance.now();
          if (now - t0 > inWrite.longestMs) {
            inWrite.longestMs = now - t0;
            inWrite.longest = step(text);
          }
          if (--inWrite.open === 0) inWrite.db += now - inWrite.busySince;
        });
    }
    return r;
  } as typeof pg.Client.prototype.query;
  const mark = <T extends object>(proto: T, method: keyof T & string, label: string) => {
    const f = proto[method] as (...a: unknown[]) => unknown;
    (proto as Record<string, unknown>)[method] = function (this: unknown, ...a: unknown[]) {
      if (counting) callsOf.set(label, (callsOf.get(label) ?? 0) + 1);
      return origin.run(label, () => f.apply(this, a));
    };
  };
  mark(WorkflowOrchestrator.prototype, 'execute', 'orchestrator runs');
  // Private methods, reached by name: the bench's view of what a task's time holds.
  const time = (method: string, into: number[]) => {
    const proto = WorkflowOrchestrator.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const f = proto[method]!;
    proto[method] = async function (this: unknown, ...a: unknown[]) {
      const t0 = performance.now();
      try {
        return await phase.run(method, () => f.apply(this, a));
      } finally {
        if (timing) into.push(performance.now() - t0);
      }
    };
  };
  // The state-moving writes, named by the state they end in (approve: → execution or completed).
  for (const method of ['transition', 'approve', 'evidence'] as const) {
    const proto = WorkflowsService.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const f = proto[method]!;
    proto[method] = async function (this: unknown, ...a: unknown[]) {
      const t0 = performance.now();
      const anatomy: Anatomy = { open: 0, busySince: 0, db: 0, pool: 0, trips: 0, longest: '', longestMs: 0 };
      const at = Date.now();
      const result = (await writeCall.run(anatomy, () => f.apply(this, a))) as {
        state?: string;
        instance?: { state: string };
      };
      if (timing) {
        const key = `${method} → ${result.instance?.state ?? result.state}`;
        const total = performance.now() - t0;
        let xs = anatomies.get(key);
        if (!xs) anatomies.set(key, (xs = []));
        xs.push({ ...anatomy, total });
        if (process.env.WF_SLOW && total > Number(process.env.WF_SLOW))
          process.stderr.write(
            `slow ${new Date(at).toISOString()} ${key} ${total.toFixed(1)} ms (database ${anatomy.db.toFixed(1)}, longest ${anatomy.longest} ${anatomy.longestMs.toFixed(1)})\n`,
          );
      }
      return result;
    };
  }
  time('claim', waits.taskClaim);
  time('endTasks', waits.taskFinish);
  time('seed', waits.seedWithWave);
  mark(SuggestionsService.prototype, 'generateForInstance', 'suggestion passes (jobs)');
}

async function run(dbName: string, env: Record<string, string | undefined>) {
  const load = await startCommandWorker<Command>(new URL(import.meta.url));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    DB_POOL_SIZE: '20',
    ...load.env,
    MODEL_RETRY_BASE_MS: '50',
    ...env,
  });
  const deps = await createDeps(config);
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const s = deps.services;
    for (const [name, specialties] of [
      ['Docs NPC', ['docs']],
      ['Code NPC', ['code']],
      ['Test NPC', ['tests']],
    ] as const)
      await s.characters.createNpc({
        name,
        description: 'bench specialist',
        metadata: { specialties: [...specialties] },
      });
    const admin = await s.users.create({
      email: null,
      password: null,
      name: 'Bench admin',
      role: 'cso',
      accountType: 'public',
    });
    const adminToken = (await s.auth.issue(admin, 'web_portal')).accessToken;
    const tokens: string[] = [];
    for (let u = 0; u < Math.min(50, INSTANCES); u++) {
      const row = await s.users.create({ email: null, password: null, name: `Creator ${u}` });
      tokens.push((await s.auth.issue(row, 'web_portal')).accessToken);
    }
    await sql`checkpoint`.execute(deps.db);
    const rootObserverId = await s.timeline.rootObserverId();
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const statementsBefore = statements;
    const writesBefore = socketWrites;
    const notifiesBefore = notifies;
    for (const xs of Object.values(waits)) xs.length = 0;
    steps.clear();
    anatomies.clear();
    timing = true;
    byOrigin.clear();
    callsOf.clear();
    counting = true;
    const flowsFrom = new Date();
    // CPU: the service's thread (its event loop's busy share too) and the database server's.
    const eluBefore = performance.eventLoopUtilization();
    const threadBefore = process.threadCpuUsage();
    const stopBackendCpu = env.DATABASE_URL ? backendCpu() : undefined;
    const r = await load.send<Awaited<ReturnType<typeof flows>>>({
      cmd: 'flow',
      url,
      tokens,
      adminToken,
      rootObserverId,
    });
    loop.disable();
    timing = false;
    counting = false;
    const statementsByOrigin = Object.fromEntries(
      [...byOrigin]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => [k, { perFlow: n / INSTANCES, calls: callsOf.get(k) }]),
    );
    const elu = performance.eventLoopUtilization(eluBefore).utilization;
    const thread = process.threadCpuUsage(threadBefore);
    const serviceCpuSec = (thread.user + thread.system) / 1e6;
    const dbCpuSec = stopBackendCpu?.();
    const waited = Object.fromEntries(
      Object.entries(waits).map(([k, xs]) => [k, { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) }]),
    );
    const flowStatements = statements - statementsBefore;
    const flowNotifies = notifies - notifiesBefore;
    // The orchestrator's own time per task, as it measured it.
    const taskRuns = await deps.db
      .selectFrom('workflow_task_runs')
      .select(['wall_ms', 'model_ms'])
      .where('status', '=', 'completed')
      .execute();
    // Each write request's time inside the service (received → answer sent), from the audit log:
    // the requests' times above less the load generator's side and the loopback's.
    await s.audit.flush();
    const served = await deps.db
      .selectFrom('audit_logs')
      .select([
        'route',
        sql<number>`count(*)::int`.as('n'),
        sql<number>`percentile_cont(0.5) within group (order by duration_ms)`.as('p50'),
        sql<number>`percentile_cont(0.99) within group (order by duration_ms)`.as('p99'),
      ])
      .where('at', '>=', flowsFrom)
      .groupBy('route')
      .orderBy('route')
      .execute();
    const overhead = taskRuns.map((t) => (t.wall_ms ?? 0) - (t.model_ms ?? 0));
    const model = taskRuns.map((t) => t.model_ms ?? 0);
    const runs = await deps.db
      .selectFrom('workflow_runs')
      .select([
        'status',
        sql<number>`extract(epoch from finished_at - created_at) * 1000`.as('ms'),
        sql<number>`extract(epoch from started_at - created_at) * 1000`.as('waitMs'),
      ])
      .execute();
    return {
      db: dbName,
      ...r,
      statementsPerFlow: flowStatements / INSTANCES,
      writesPerFlow: (socketWrites - writesBefore) / INSTANCES,
      notifiesPerFlow: flowNotifies / INSTANCES,
      loopP50: loop.percentile(50) / 1e6,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      waited,
      served,
      steps: [...steps].map(([k, xs]) => ({ step: k, n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) })),
      anatomy: [...anatomies].map(([k, xs]) => {
        // The slowest 1 %: what their time was made of, on average.
        const totals = xs.map((x) => x.total);
        const p99 = pct(totals, 99);
        const slow = xs.filter((x) => x.total >= p99);
        const mean = (f: (x: (typeof xs)[number]) => number, of: typeof xs) =>
          of.reduce((a, x) => a + f(x), 0) / Math.max(1, of.length);
        const part = (of: typeof xs) =>
          [mean((x) => x.db, of), mean((x) => x.pool, of), mean((x) => x.total - x.db - x.pool, of)]
            .map((v) => v.toFixed(1))
            .join(' / ');
        return {
          write: k,
          n: xs.length,
          trips: mean((x) => x.trips, xs),
          p50: pct(totals, 50),
          p99,
          all: part(xs),
          slowest: part(slow),
          // Which statement was the longest of each of the slowest 1 %, how often, its mean time.
          slowestStatements: [
            ...slow.reduce(
              (m, x) => m.set(x.longest, [...(m.get(x.longest) ?? []), x]),
              new Map<string, typeof xs>(),
            ),
          ]
            .sort((a, b) => b[1].length - a[1].length)
            .map(([k, of]) => `${k} ×${of.length} (${mean((x) => x.longestMs, of).toFixed(0)} ms)`)
            .join(', '),
        };
      }),
      statementsByOrigin,
      elu,
      serviceCpuMsPerFlow: (1000 * serviceCpuSec) / INSTANCES,
      dbCpuMsPerFlow: dbCpuSec === undefined ? undefined : (1000 * dbCpuSec) / INSTANCES,
      taskRuns: taskRuns.length,
      overheadMean: overhead.reduce((a, b) => a + b, 0) / Math.max(1, overhead.length),
      overheadP50: pct(overhead, 50),
      overheadP99: pct(overhead, 99),
      modelP50: pct(model, 50),
      runsCompleted: runs.filter((x) => x.status === 'completed').length,
      runP50: pct(
        runs.map((x) => Number(x.ms)),
        50,
      ),
      runWaitP50: pct(
        runs.map((x) => Number(x.waitMs)),
        50,
      ),
      runWaitP99: pct(
        runs.map((x) => Number(x.waitMs)),
        99,
      ),
      runP99: pct(
        runs.map((x) => Number(x.ms)),
        99,
      ),
    };
  } finally {
    await load.close();
    await app.close();
    await deps.close();
  }
}

if (!isMainThread) await loadGenerator();
else {
  const results = await onEachDatabase('bench_wf', values.only, run);
  console.log(
    `\n${INSTANCES} documentation-flow instances, ${PARALLEL} at once, think time ${THINK_MS} ms mean, 3 tasks each (orchestrator concurrency 3), model server answering at once\n`,
  );
  console.log(
    '| db | flows | failed | wall s | requests/s | transitions/s | run (queued → finished) p50 / p99 ms | run queued → started p50 / p99 ms | task overhead mean / p50 / p99 ms | model ms/task p50 |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.db} | ${INSTANCES} | ${r.failures} | ${r.wallSec.toFixed(1)} | ${(r.requests / r.wallSec).toFixed(0)} | ${(r.transitions / r.wallSec).toFixed(1)} | ${r.runP50.toFixed(0)} / ${r.runP99.toFixed(0)} | ${r.runWaitP50.toFixed(0)} / ${r.runWaitP99.toFixed(0)} | ${r.overheadMean.toFixed(1)} / ${r.overheadP50.toFixed(1)} / ${r.overheadP99.toFixed(1)} | ${r.modelP50.toFixed(1)} |`,
    );
  console.log(
    '\nthe service process: statements and NOTIFYs sent per flow, writes on its sockets (database, HTTP, sockets) per flow, event-loop delay (ms)\n',
  );
  console.log(
    '| db | statements / flow | NOTIFYs / flow | socket writes / flow | loop p50 / p99 / max ms | loop busy | service thread CPU ms / flow | PostgreSQL backends CPU ms / flow |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.db} | ${r.statementsPerFlow.toFixed(0)} | ${r.notifiesPerFlow.toFixed(1)} | ${r.writesPerFlow.toFixed(0)} | ${r.loopP50.toFixed(1)} / ${r.loopP99.toFixed(1)} / ${r.loopMax.toFixed(0)} | ${(100 * r.elu).toFixed(0)} % | ${r.serviceCpuMsPerFlow.toFixed(1)} | ${r.dbCpuMsPerFlow?.toFixed(1) ?? '–'} |`,
    );
  console.log('\nthe service process: statements per flow by where they come from\n');
  console.log('| db | from | statements / flow | calls / flow | statements / call |');
  console.log('|---|---|---|---|---|');
  for (const r of results)
    for (const [k, { perFlow, calls }] of Object.entries(r.statementsByOrigin))
      console.log(
        `| ${r.db} | ${k} | ${perFlow.toFixed(1)} | ${calls === undefined ? '–' : (calls / INSTANCES).toFixed(1)} | ${calls === undefined ? '–' : ((perFlow * INSTANCES) / calls).toFixed(1)} |`,
      );
  console.log(
    "\nthe service process: waits for a pool connection, round trips of the row-locked instance reads (lock wait included) and of the other statements, a task's claim and finish transactions (ms)\n",
  );
  console.log('| db | wait | n | p50 | p99 |');
  console.log('|---|---|---|---|---|');
  for (const r of results)
    for (const [k, v] of Object.entries(r.waited))
      if (v.n > 0) console.log(`| ${r.db} | ${k} | ${v.n} | ${v.p50.toFixed(2)} | ${v.p99.toFixed(2)} |`);
  console.log(
    "\na task's claim (a run's first wave together, in the seeding when it created the tasks) and finish, step by step: pool wait, round trips (ms)\n",
  );
  console.log('| db | step | n | p50 | p99 |');
  console.log('|---|---|---|---|---|');
  for (const r of results)
    for (const v of r.steps)
      console.log(`| ${r.db} | ${v.step} | ${v.n} | ${v.p50.toFixed(2)} | ${v.p99.toFixed(2)} |`);
  console.log(
    "\nthe state-moving writes inside the service (the workflows service's call, from call to answer; auth, validation and the HTTP layer are outside it): p50 / p99, and what the time of all of them and of their slowest 1 % was made of on average: the database (a statement of the write in flight) / pool waits / the rest (the service's CPU, and its waits for the event loop), ms\n",
  );
  console.log(
    '| db | write | n | round trips | p50 | p99 | all: database / pool / rest | slowest 1 %: database / pool / rest |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results)
    for (const a of r.anatomy)
      console.log(
        `| ${r.db} | ${a.write} | ${a.n} | ${a.trips.toFixed(1)} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.all} | ${a.slowest} |`,
      );
  console.log("\nthe slowest 1 % of each: each one's longest statement (how many, their mean round trip)\n");
  console.log('| db | write | longest statements |');
  console.log('|---|---|---|');
  for (const r of results)
    for (const a of r.anatomy) console.log(`| ${r.db} | ${a.write} | ${a.slowestStatements} |`);
  console.log('\nper request (ms):\n');
  console.log('| db | request | n | p50 | p99 |');
  console.log('|---|---|---|---|---|');
  for (const r of results)
    for (const [k, v] of Object.entries(r.summary) as [string, { n: number; p50: number; p99: number }][])
      console.log(`| ${r.db} | ${k} | ${v.n} | ${v.p50.toFixed(1)} | ${v.p99.toFixed(1)} |`);
  console.log(
    "\nthe load generator's event-loop delay (ms), and the write requests' time inside the service (received → answer sent; audit log, ms)\n",
  );
  console.log('| db | load generator loop p50 / p99 / max ms |');
  console.log('|---|---|');
  for (const r of results)
    console.log(
      `| ${r.db} | ${r.clientLoop.p50.toFixed(1)} / ${r.clientLoop.p99.toFixed(1)} / ${r.clientLoop.max.toFixed(0)} |`,
    );
  console.log('\n| db | route | n | p50 | p99 |');
  console.log('|---|---|---|---|---|');
  for (const r of results)
    for (const v of r.served)
      console.log(
        `| ${r.db} | ${v.route} | ${v.n} | ${Number(v.p50).toFixed(1)} | ${Number(v.p99).toFixed(1)} |`,
      );
  process.exit(0);
}
