// One durable job queue for the whole service: pg-boss on the same database, given our own pool
// through a `db` adapter (never a pool of its own: PGlite has one connection). Jobs are enqueued
// with the caller's transaction, so a job exists exactly when the change that asked for it does.
import { CompiledQuery, sql } from 'kysely';
import { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { DatabaseHandle, Executor } from '../db/database.js';
import { jobOptions, type EnqueueOptions } from './job-options.js';

export interface JobContext {
  jobId: string;
  retryCount: number;
  log: Logger;
}

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  schema: S;
  handler: (data: z.output<S>, ctx: JobContext) => Promise<void>;
  /** Attempts after the first failure (default 5), with exponential backoff from retryDelay s. */
  retryLimit?: number;
  retryDelay?: number;
  /** How long a fetched job may stay active before pg-boss fails it and it is retried (default
   * pg-boss's 15 minutes). A node killed mid-job holds its jobs that long: a short job says so. */
  expireInSeconds?: number;
  /** Jobs fetched per poll; the handler is still called once per job. */
  batchSize?: number;
  pollingIntervalSeconds?: number;
  /** Jobs of this queue a node handles at once (pg-boss workers; default 1). */
  localConcurrency?: number;
  /** The jobs of one fetched batch are handled side by side instead of one after the other: for
   * handlers that mostly wait on the network. A batch with a failed job fails as a whole (pg-boss
   * fails every job of a batch whose handler throws): its handler must find a job it already
   * did done when it runs again. Not with `coalesceBy`. */
  batchSideBySide?: boolean;
  /** Jobs of one fetched batch with the same key are handled by one call, the first's (the
   * others complete with it): for work that reads the state as it is when it runs, which every
   * job of the batch asked for after its own change committed (a job is fetched only once its
   * transaction committed), so one run after the fetch serves them all. */
  coalesceBy?: (data: z.output<S>) => string;
  /** False: an enqueue never wakes this node's workers (`wake`), so the jobs sent between two
   * polls meet in one batch (with `coalesceBy`, one run for them all). */
  wakeOnEnqueue?: false;
}

interface LocalWorker {
  id: string;
  /** Handling a job now. */
  busy: boolean;
  /** When `wake` last chose it (0: since then it took a job). */
  wokenAt: number;
}

/** Whether a worker fetches again as soon as its batch is handled: only when the fetch came back
 * full (a backlog). A shorter one means the queue was drained, so the worker waits for its poll
 * (or a wake-up), and the jobs sent meanwhile come as one batch, coalesced (`coalesceBy`) and
 * completed together, instead of a fetch, a handler call and a completion for each one as it
 * comes. A batch of one job is always full: such queues drain a backlog at the handlers' pace. */
export function fetchAgainAtOnce(fetched: number, batchSize: number): boolean {
  return fetched >= batchSize;
}

/** The advisory lock pg-boss's install runs under (any constant; every node uses the same). */
const INSTALL_LOCK = 74_201_512;

function adapter(executor: Executor) {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const r = await executor.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: r.rows };
    },
  };
}

/** A schedule as pg-boss keeps it (its key names our row). */
export interface QueueSchedule {
  key: string;
  cron: string;
  timezone: string;
}

export interface StartOptions {
  /** Run this node's job workers. */
  work: boolean;
  /** Run the scheduler (pg-boss's cron pass, claimed by one node per interval, and its forwarding
   * worker). Its statements run on the same pool as everything else, never inside another
   * statement's transaction, so on PGlite they wait for the one connection like any request. */
  schedule?: boolean;
  /** Seconds between cron passes (1–45; pg-boss's default 30). */
  scheduleIntervalSeconds?: number;
}

export class JobQueue {
  private readonly defs = new Map<string, JobDefinition>();
  private boss: PgBoss | undefined;
  /** A pg-boss that is never started: previewSchedule is pure (cron-parser), no database. */
  private previewer: PgBoss | undefined;
  private started = false;
  /** This node's pg-boss workers per queue (none on an API-only node). */
  private readonly workers = new Map<string, LocalWorker[]>();
  /** The jobs this node's handlers hold now (fetched, not yet settled), by id. */
  private readonly held = new Map<string, { name: string; job: { id: string; retryCount: number } }>();
  /** Called whenever a held job settles (a drain waiting for the last one). */
  private onSettled: (() => void) | undefined;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly log: Logger,
  ) {}

  get schema(): string {
    return this.handle.schema ? `${this.handle.schema}_boss` : 'pgboss';
  }

  /** Whether jobs can be enqueued (started, not stopped; CLI commands run without a queue). */
  get accepting(): boolean {
    return this.boss !== undefined;
  }

  define<S extends z.ZodType>(def: JobDefinition<S>): void {
    if (this.defs.has(def.name)) throw new Error(`job ${def.name} is defined twice`);
    this.defs.set(def.name, def);
  }

  /** Enqueues inside the given transaction (or on the database when none is open). */
  async enqueue(
    executor: Executor,
    name: string,
    data: unknown,
    options: EnqueueOptions = {},
  ): Promise<string | null> {
    const { def, boss } = this.sendable(name);
    const payload = def.schema.parse(data) as object;
    const id = await boss.send(name, payload, { db: adapter(executor), ...jobOptions(def, options) });
    // Sent outside a transaction, the job is already visible: this node's workers fetch it now
    // instead of at their next poll. (In a transaction it is not yet; the caller may call `wake`
    // after commit.)
    if (id !== null && !executor.isTransaction && !options.startAfterSeconds) this.wake(name);
    return id;
  }

  /** Enqueues several jobs of one queue, each as `enqueue` makes it (same options, same rows), in
   * one statement (pg-boss's multi-row `insert`) inside the given transaction: a batch's jobs cost
   * one round trip instead of one each. Every payload is checked before anything is sent. */
  async enqueueMany(
    executor: Executor,
    name: string,
    data: readonly unknown[],
    options: EnqueueOptions = {},
  ): Promise<void> {
    const { def, boss } = this.sendable(name);
    const payloads = data.map((d) => def.schema.parse(d) as object);
    if (payloads.length === 0) return;
    const common = jobOptions(def, options);
    await boss.insert(
      name,
      payloads.map((payload) => ({ data: payload, ...common })),
      { db: adapter(executor) },
    );
    if (!executor.isTransaction && !options.startAfterSeconds) this.wake(name);
  }

  private sendable(name: string): { def: JobDefinition; boss: PgBoss } {
    const def = this.defs.get(name);
    if (!def) throw new Error(`no job named ${name} is defined`);
    if (!this.boss) throw new Error('the job queue has not been started');
    return { def, boss: this.boss };
  }

  /** Makes one idle worker of this node fetch a queue's new job now rather than at its next poll
   * (one: waking them all would send a fetch each for a single job). With none idle, a busy one
   * fetches as soon as it is done. */
  wake(name: string): void {
    if (this.defs.get(name)?.wakeOnEnqueue === false) return;
    const now = Date.now();
    // Idle, and not already woken for another job (a woken worker whose fetch found nothing,
    // another node having taken the job, counts as idle again after a second).
    const idle = this.workers.get(name)?.find((w) => !w.busy && now - w.wokenAt > 1000);
    if (!idle) return;
    idle.wokenAt = now;
    this.boss?.notifyWorker(idle.id);
  }

  /** Runs pg-boss's install (its schema, its queues) one node at a time. Two nodes starting
   * together on a fresh database would otherwise both create the schema, and the one that loses
   * fails on the other's half-made objects (and leaves its pooled connection in an aborted
   * transaction). The lock is a session lock on a connection of its own; on PGlite, one process
   * with one connection, there is nobody to wait for. */
  private async installing(install: () => Promise<void>): Promise<void> {
    if (this.handle.kind !== 'postgres') return install();
    await this.handle.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${INSTALL_LOCK})`.execute(conn);
      try {
        await install();
      } finally {
        await sql`select pg_advisory_unlock(${INSTALL_LOCK})`.execute(conn);
      }
    });
  }

  /** Creates pg-boss's schema and queues, then with `work` starts this node's workers. */
  async start(opts: StartOptions): Promise<void> {
    await this.open(opts);
    if (opts.work) await this.work();
  }

  /** Creates pg-boss's schema and queues (supervised with `work`): jobs can be enqueued. */
  async open({ work, schedule = false, scheduleIntervalSeconds }: StartOptions): Promise<void> {
    if (this.started) return;
    const boss = new PgBoss({
      db: adapter(this.handle.db),
      schema: this.schema,
      supervise: work,
      schedule,
      ...(scheduleIntervalSeconds
        ? {
            cronMonitorIntervalSeconds: scheduleIntervalSeconds,
            cronWorkerIntervalSeconds: Math.min(5, scheduleIntervalSeconds),
          }
        : {}),
      migrate: true,
    });
    boss.on('error', (err: unknown) => this.log.error({ err }, 'job queue error'));
    // Only the missing queues are created: with them all there (every start but the first), one
    // read instead of a statement per queue.
    const created: string[] = [];
    await this.installing(async () => {
      await boss.start();
      const names = [...this.defs.keys()];
      const existing = new Set((await boss.getQueues(names)).map((q) => q.name));
      for (const name of names.filter((n) => !existing.has(n))) {
        await boss.createQueue(name);
        created.push(name);
      }
    });
    this.boss = boss;
    // pg-boss's start cached the queues there were, and creating one drops it from the cache: warm
    // it again now, outside any transaction (on a cold cache `send` looks the queue up on a
    // connection of its own, which on PGlite's one connection would wait forever behind the
    // caller's open transaction).
    for (const name of created) await boss.touch(name, '00000000-0000-0000-0000-000000000000');
    this.started = true;
  }

  /** Starts this node's workers. Each fetches at once, then polls: a start calls this last
   * (startup/workers.ts), since their first fetches, one per worker, would otherwise hold the
   * embedded database's one connection ahead of the start's own statements. */
  async work(): Promise<void> {
    const boss = this.boss;
    if (!boss) throw new Error('the job queue has not been started');
    if (this.workers.size > 0) return;
    for (const def of this.defs.values()) {
      // One pg-boss worker per unit of concurrency, each knowing its own id: a worker whose fetch
      // came back full fetches again at once when it is done (so a backlog drains at the
      // handlers' pace, not one batch per worker per poll), and `wake` can reach every worker of
      // the queue.
      const workers: LocalWorker[] = [];
      this.workers.set(def.name, workers);
      const batchSize = def.batchSize ?? 1;
      for (let i = 0; i < (def.localConcurrency ?? 1); i++) {
        const self: LocalWorker = { id: '', busy: false, wokenAt: 0 };
        self.id = await boss.work(
          def.name,
          { batchSize, pollingIntervalSeconds: def.pollingIntervalSeconds ?? 1 },
          async (jobs) => {
            self.busy = true;
            self.wokenAt = 0;
            for (const job of jobs) this.held.set(job.id, { name: def.name, job });
            try {
              await this.runJobs(def, jobs);
            } finally {
              for (const job of jobs) this.held.delete(job.id);
              this.onSettled?.();
              self.busy = false;
              if (self.id && fetchAgainAtOnce(jobs.length, batchSize)) boss.notifyWorker(self.id);
            }
          },
        );
        workers.push(self);
      }
    }
  }

  private async runJobs(def: JobDefinition, jobs: { id: string; data: unknown }[]): Promise<void> {
    if (def.batchSideBySide && jobs.length > 1) {
      const failed = (await Promise.allSettled(jobs.map((job) => this.runJobs(def, [job])))).find(
        (r) => r.status === 'rejected',
      );
      if (failed) throw failed.reason;
      return;
    }
    const handled = new Set<string>();
    for (const job of jobs) {
      const log = this.log.child({ job: def.name, jobId: job.id });
      const data = def.schema.parse(job.data);
      if (def.coalesceBy) {
        const key = def.coalesceBy(data);
        if (handled.has(key)) continue;
        handled.add(key);
      }
      try {
        await def.handler(data, {
          jobId: job.id,
          retryCount: (job as { retryCount?: number }).retryCount ?? 0,
          log,
        });
      } catch (err) {
        log.warn({ err }, 'job failed; it will be retried');
        throw err;
      }
    }
  }

  /** Creates or replaces the schedule `key` of a queue: a job of `data` at each occurrence of
   * `cron` (5 fields) in time zone `tz`, one per occurrence across every node. Never call it inside
   * an open transaction: it runs on a connection of its own (PGlite has one). */
  async schedule(name: string, key: string, cron: string, tz: string, data: object): Promise<void> {
    const def = this.defs.get(name);
    if (!def) throw new Error(`no job named ${name} is defined`);
    if (!this.boss) throw new Error('the job queue has not been started');
    await this.boss.schedule(name, cron, def.schema.parse(data) as object, {
      tz,
      key,
      retryLimit: def.retryLimit ?? 5,
      retryDelay: def.retryDelay ?? 2,
      retryBackoff: true,
    });
  }

  /** Removes a schedule (nothing when there is none). Never inside an open transaction. */
  async unschedule(name: string, key: string): Promise<void> {
    if (!this.boss) throw new Error('the job queue has not been started');
    await this.boss.unschedule(name, key);
  }

  /** The schedules of a queue. */
  async schedules(name: string): Promise<QueueSchedule[]> {
    if (!this.boss) throw new Error('the job queue has not been started');
    return (await this.boss.getSchedules(name)).map((s) => ({
      key: s.key,
      cron: s.cron,
      timezone: s.timezone,
    }));
  }

  /** The next `count` occurrences of a cron expression in a time zone after `from` (default now),
   * computed as the scheduler computes them; throws on an expression or zone it cannot evaluate. */
  nextRuns(cron: string, tz: string, count = 1, from = new Date()): Date[] {
    this.previewer ??= new PgBoss({ db: adapter(this.handle.db), schema: this.schema });
    return this.previewer.previewSchedule(cron, { tz, count, from });
  }

  /** Stops the queue. With `graceMs` (a node's drain): fetches nothing more, lets the running
   * handlers finish for up to that long, then hands each job still running back to the queue, due
   * at once, so another node takes it now rather than when its claim expires (`expireInSeconds`,
   * pg-boss's 15 minutes by default). pg-boss records the hand-back as a failed attempt (it counts
   * towards `retryLimit`); a handler still running here may finish after another node started the
   * job again, as after any lost claim (handlers find work already done done). */
  async stop({ graceMs }: { graceMs?: number } = {}): Promise<{ released: number }> {
    if (!this.boss) return { released: 0 };
    const boss = this.boss;
    let released = 0;
    if (graceMs !== undefined) {
      for (const name of this.workers.keys()) await boss.offWork(name, { wait: false });
      await this.settledWithin(graceMs);
      released = await this.release(boss);
    }
    this.workers.clear();
    this.boss = undefined;
    this.started = false;
    // pg-boss records a job completed only after its handler has returned, and a forced stop fails
    // every job not yet recorded: when every handler finished within the grace, the stop is
    // graceful so their completions land. With jobs handed back (their handlers never return) it is
    // forced, not to wait out the timeout for them.
    await boss.stop({ graceful: graceMs === undefined || released === 0, timeout: 5000 });
    return { released };
  }

  /** Resolves once no handler of this node holds a job, or after `ms`. */
  private async settledWithin(ms: number): Promise<void> {
    if (this.held.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.onSettled = () => {
        if (this.held.size === 0) done();
      };
    });
    this.onSettled = undefined;
  }

  /** Fails the jobs still held by this node's handlers (fenced to the attempt each was fetched
   * as), then makes each due now. Returns how many were handed back. */
  private async release(boss: PgBoss): Promise<number> {
    const byQueue = new Map<string, { id: string; retryCount: number }[]>();
    for (const { name, job } of this.held.values()) byQueue.set(name, [...(byQueue.get(name) ?? []), job]);
    let released = 0;
    for (const [name, jobs] of byQueue) {
      await boss.fail(name, jobs, { message: 'the node running it shut down' });
      for (const job of jobs) {
        const r = await boss.update(name, undefined, { id: job.id, startAfter: new Date() });
        released += r.updated;
      }
      this.log.info({ job: name, jobs: jobs.map((j) => j.id) }, 'jobs handed back at shutdown');
    }
    return released;
  }

  /** Per-queue counts for /api/admin/health. */
  async status(): Promise<{
    running: boolean;
    queues: { name: string; queued: number; active: number; failed: number }[];
  }> {
    if (!this.boss) return { running: false, queues: [] };
    const queues = [];
    for (const name of this.defs.keys()) {
      const q = await this.boss.getQueue(name);
      queues.push({
        name,
        queued: q?.queuedCount ?? 0,
        active: q?.activeCount ?? 0,
        failed: q?.failedCount ?? 0,
      });
    }
    return { running: true, queues };
  }

  /** Test and CLI helper: waits until no job is due, running or waiting to retry (jobs first
   * scheduled for later are not waited for). */
  async drain(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.handle.db.executeQuery(
        CompiledQuery.raw(
          `select count(*)::int as n from "${this.schema}".job where state in ('retry','active') or (state = 'created' and start_after <= now())`,
          [],
        ),
      );
      if ((r.rows[0] as { n: number }).n === 0) return;
      if (Date.now() > deadline) throw new Error('jobs did not finish in time');
      await new Promise((res) => setTimeout(res, 50));
    }
  }
}
