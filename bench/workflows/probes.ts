// The workflows bench's probes on the service's main thread: the statements, NOTIFYs and socket
// writes it sends (and where from), its waits (pool connections, locked reads, a task's claim and
// finish step by step), the anatomy of each state-moving write, and its PostgreSQL backends' CPU.
// `installProbes()` wraps node-postgres, net.Socket and the workflow classes; what they record is
// shared through the exports below (`probe`'s counters and flags, the maps), which the run resets
// and reads.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import pg from 'pg';
import { SuggestionsService } from '../../src/modules/suggestions/index.js';
import { WorkflowOrchestrator, WorkflowsService } from '../../src/modules/workflows/index.js';
import { pct } from '../percentile.js';

// Every statement the service's process sends (its pool, the job queue's, the realtime adapter's
// NOTIFYs, the change feed), counted where node-postgres sends them; only on the main thread.
// What a task's time holds besides its statements: each wait for a pool connection, and each
// round trip (sent → answered, the event loop's delay in reading the answer included) of the
// row-locked instance reads every write starts with (FOR UPDATE or, a task's claim and finish,
// FOR SHARE; the lock's wait included) and of the others.
export const probe = {
  statements: 0,
  notifies: 0,
  /** Writes (system calls) on the service's sockets: its database connections, HTTP and sockets. */
  socketWrites: 0,
  /** Counting statements by origin, socket writes and marked calls (`byOrigin`, `callsOf`). */
  counting: false,
  /** Recording waits, steps and anatomies. */
  timing: false,
};
// Where the statements come from: the orchestrator's runs and the suggestion passes (their calls
// marked below), the job queue's own (pg-boss's: enqueue, fetch, complete, maintenance), NOTIFYs,
// and the rest: the requests, the account checks, the change feed.
const origin = new AsyncLocalStorage<string>();
export const byOrigin = new Map<string, number>();
/** Calls of the marked methods (runs executed, suggestion passes' jobs handled). */
export const callsOf = new Map<string, number>();
export const waits = {
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
export const anatomies = new Map<string, (Anatomy & { total: number })[]>();
/** Inside a task's claim or finish (the bench's `time` below): which one, for `steps`. */
const phase = new AsyncLocalStorage<string>();
/** The claim's and the finish's round trips by step ("claim: select workflow_tasks"), and their
 * pool waits: where those transactions' time goes. */
export const steps = new Map<string, number[]>();
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
export function backendCpu() {
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
/** Wraps what the probes watch; once, on the main thread, before the service starts. */
export function installProbes(): void {
  for (const k of ['_write', '_writev'] as const) {
    const proto = Socket.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const f = proto[k]!;
    proto[k] = function (this: unknown, ...a: unknown[]) {
      if (probe.counting) probe.socketWrites++;
      return f.apply(this, a);
    };
  }
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its pool below
  const connect = pg.Pool.prototype.connect as (this: pg.Pool, ...args: unknown[]) => unknown;
  pg.Pool.prototype.connect = function (this: pg.Pool, ...args: unknown[]) {
    const r = connect.apply(this, args);
    if (probe.timing && args.length === 0 && r instanceof Promise) {
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
    probe.statements++;
    const pid = (this as unknown as { processID: number | null }).processID;
    if (pid) backendPids.add(pid);
    const q = args[0] as string | { text?: string } | undefined;
    const text = typeof q === 'string' ? q : q?.text;
    const notify = !!text && /notify/i.test(text.slice(0, 40));
    if (notify) probe.notifies++;
    if (probe.counting) {
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
    if (probe.timing && text && r instanceof Promise) {
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
      if (probe.counting) callsOf.set(label, (callsOf.get(label) ?? 0) + 1);
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
        if (probe.timing) into.push(performance.now() - t0);
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
      if (probe.timing) {
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

/** Each state-moving write's times: p50 / p99, and what the time of all of them and of their
 * slowest 1 % was made of on average (database / pool / rest), and those slowest's longest
 * statements. */
export function anatomySummary() {
  return [...anatomies].map(([k, xs]) => {
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
  });
}
