// One batch of one operation, measured over all the work it causes: the CPU of the code's
// service and of its database's backends from before the first operation until the system is
// quiet again, less what the same processes use when idle (their timers: each job queue's poll,
// the scheduler, the health checks) over the same time.
//
// Quiet: over the last --quiet-ms the CPU moved no more than idle plus two clock ticks, and (on
// PostgreSQL) no job is due or running and no webhook delivery is pending. Work the batch left
// for later (a chat exchange's embedding waits for the next turn's query, or for the backstop
// job two minutes on) is waited for: the time until the earliest job still waiting becomes due is
// not counted, the job's run is. On PGlite the job table is inside the service's own database
// thread, so nothing is asked there: quiet is the CPU alone, and jobs starting later are not
// waited for.
import pg from 'pg';
import { CpuMeter, minus, plus, ZERO, type CpuReading } from './cpu.js';
import type { Clients, Kind } from './ops.js';

const POLL_MS = 250;
const SLACK_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A code being measured: its service's clients, its meter and (PostgreSQL) its database. */
export interface Code {
  label: string;
  clients: Clients;
  meter: CpuMeter;
  db: pg.Client | undefined;
  /** CPU ms per ms when idle, measured once after seeding: the quiet test's allowance. */
  idle: CpuReading;
}

export interface Settings {
  quietMs: number;
  settleMaxMs: number;
  idleMs: number;
}

export interface Batch {
  kind: Kind;
  ops: number;
  failed: number;
  missing: number;
  deliveries: number;
  /** CPU ms of the whole batch, idle subtracted. */
  cpu: CpuReading;
  /** The idle CPU subtracted. */
  idleCpu: CpuReading;
  countedMs: number;
  /** The counted intervals (the batch, then each deferred job's run), idle not subtracted. */
  intervals: CpuReading[];
  waitedMs: number;
  settled: boolean;
}

/** Rates (per ms) of a reading over its own time. */
const rate = (d: CpuReading): CpuReading => ({
  t: 1,
  service: d.service / d.t,
  pglite: d.pglite / d.t,
  pgOurs: d.pgOurs / d.t,
  pgShared: d.pgShared / d.t,
});
const scale = (r: CpuReading, ms: number): CpuReading => ({
  t: ms,
  service: r.service * ms,
  pglite: r.pglite * ms,
  pgOurs: r.pgOurs * ms,
  pgShared: r.pgShared * ms,
});

/** What the code's database still has to do: jobs due or running, pending webhook deliveries,
 * and in how many ms the next job waiting for its start becomes due. */
async function pendingWork(db: pg.Client) {
  const { rows } = await db.query<{ due: number; next_ms: number | null }>(
    `select count(*) filter (where state = 'active' or (state in ('created', 'retry') and start_after <= now()))::int due,
       extract(epoch from min(start_after - now()) filter (where state in ('created', 'retry') and start_after > now())) * 1000 next_ms
     from pgboss.job`,
  );
  const hooks = await db.query<{ n: number }>(
    `select count(*)::int n from webhook_deliveries where status = 'pending'`,
  );
  return { due: rows[0]!.due + hooks.rows[0]!.n, nextMs: rows[0]!.next_ms ?? undefined };
}

/** Polls until quiet (see the header), counting from `from` (default now); with `waitDeferred`,
 * the jobs that become due within the settle limit are waited for and their runs counted. The
 * CPU used over the counted intervals, their length, and the time waited between them. */
export async function settle(code: Code, s: Settings, waitDeferred: boolean, from = code.meter.poll()) {
  const started = performance.now();
  let counted = ZERO;
  let waitedMs = 0;
  let history = [from];
  const intervals: CpuReading[] = [];
  for (;;) {
    await sleep(POLL_MS);
    const now = code.meter.poll();
    history.push(now);
    const past = history.findLast((h) => now.t - h.t >= s.quietMs);
    const overdue = now.t - started > s.settleMaxMs;
    if (!past && !overdue) continue;
    if (past && !overdue) {
      const d = minus(now, past);
      const moving =
        d.service > code.idle.service * d.t + SLACK_MS || d.pgOurs > code.idle.pgOurs * d.t + SLACK_MS;
      if (moving) continue;
    }
    const work = code.db && !overdue ? await pendingWork(code.db) : { due: 0, nextMs: undefined };
    if (work.due > 0) continue;
    intervals.push(minus(now, from));
    counted = plus(counted, intervals.at(-1)!);
    const left = s.settleMaxMs - (performance.now() - started);
    if (!waitDeferred || work.nextMs === undefined || work.nextMs > left)
      return { counted, intervals, waitedMs, settled: !overdue };
    // Not counted: the wait until a second before the job is due.
    const wait = Math.max(0, work.nextMs - 1000);
    await sleep(wait);
    waitedMs += wait;
    from = code.meter.poll();
    history = [from];
  }
}

/** The idle rates now: quiet first (the jobs due within the settle limit run before), then `ms`
 * of nothing. */
export async function measureIdle(code: Code, s: Settings, ms: number): Promise<CpuReading> {
  await settle(code, s, true);
  const from = code.meter.poll();
  await sleep(ms);
  return rate(minus(code.meter.poll(), from));
}

/** One batch: a few searches first (not counted: the pool's connections, closed after ten idle
 * seconds, open again, as in a busy service; searches leave no work behind), quiet, the idle
 * rates over --idle-ms, then `k` operations and everything they cause. */
export async function measureBatch(
  code: Code,
  kind: Kind,
  k: number,
  concurrency: number,
  s: Settings,
): Promise<Batch> {
  await code.clients.run('search', 2 * concurrency, concurrency);
  const idle = await measureIdle(code, s, s.idleMs);
  const from = code.meter.poll();
  // Polled meanwhile too: a backend that ends mid-batch counts with a recent reading.
  const polling = setInterval(() => code.meter.poll(), POLL_MS);
  const { failed, missing } = await code.clients
    .run(kind, k, concurrency)
    .finally(() => clearInterval(polling));
  const { counted, intervals, waitedMs, settled } = await settle(code, s, true, from);
  const idleCpu = scale(idle, counted.t);
  return {
    kind,
    ops: k,
    failed,
    missing,
    deliveries: kind === 'ingest' ? (k - failed) * code.clients.deliveriesPerIngest - missing : 0,
    cpu: { ...minus(counted, idleCpu), t: counted.t },
    idleCpu,
    countedMs: counted.t,
    intervals,
    waitedMs,
    settled,
  };
}
