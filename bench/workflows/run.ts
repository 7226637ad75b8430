// The workflows bench's run on one database: the service on the main thread (the entry has
// installed its probes), NPC specialists, an admin and creators seeded, then the load generator's flows
// (bench/workflows/load.ts, in a worker thread) driven against it, and the figures gathered from
// the flows, the probes and the database.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { BenchDatabase } from '../databases.js';
import { pct } from '../percentile.js';
import { startService } from '../service.js';
import { startCommandWorker } from '../worker-commands.js';
import type { Command, flows } from './load.js';
import { anatomies, anatomySummary, backendCpu, byOrigin, callsOf, probe, steps, waits } from './probes.js';

/** The bench's options: flows in all, at a time, and the mean think time before each request. */
export interface Options {
  instances: number;
  parallel: number;
  thinkMs: number;
}

/** Runs the flows on one database (for `onEachDatabase`). */
export async function run(o: Options, dbName: BenchDatabase, env: Record<string, string | undefined>) {
  const load = await startCommandWorker<Command>(new URL('./load.ts', import.meta.url));
  const { deps, url, close } = await startService({
    DB_POOL_SIZE: '20',
    ...load.env,
    MODEL_RETRY_BASE_MS: '50',
    ...env,
  });
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
    for (let u = 0; u < Math.min(50, o.instances); u++) {
      const row = await s.users.create({ email: null, password: null, name: `Creator ${u}` });
      tokens.push((await s.auth.issue(row, 'web_portal')).accessToken);
    }
    await sql`checkpoint`.execute(deps.db);
    const rootObserverId = await s.timeline.rootObserverId();
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const statementsBefore = probe.statements;
    const writesBefore = probe.socketWrites;
    const notifiesBefore = probe.notifies;
    for (const xs of Object.values(waits)) xs.length = 0;
    steps.clear();
    anatomies.clear();
    probe.timing = true;
    byOrigin.clear();
    callsOf.clear();
    probe.counting = true;
    const flowsFrom = new Date();
    // CPU: the service's thread (its event loop's busy share too) and the database server's.
    const eluBefore = performance.eventLoopUtilization();
    const threadBefore = process.threadCpuUsage();
    const stopBackendCpu = env.DATABASE_URL ? backendCpu() : undefined;
    const r = await load.send<Awaited<ReturnType<typeof flows>>>({
      cmd: 'flow',
      ...o,
      url,
      tokens,
      adminToken,
      rootObserverId,
    });
    loop.disable();
    probe.timing = false;
    probe.counting = false;
    const statementsByOrigin = Object.fromEntries(
      [...byOrigin]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => [k, { perFlow: n / o.instances, calls: callsOf.get(k) }]),
    );
    const elu = performance.eventLoopUtilization(eluBefore).utilization;
    const thread = process.threadCpuUsage(threadBefore);
    const serviceCpuSec = (thread.user + thread.system) / 1e6;
    const dbCpuSec = stopBackendCpu?.();
    const waited = Object.fromEntries(
      Object.entries(waits).map(([k, xs]) => [k, { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) }]),
    );
    const flowStatements = probe.statements - statementsBefore;
    const flowNotifies = probe.notifies - notifiesBefore;
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
    const runMs = runs.map((x) => Number(x.ms));
    const runWaitMs = runs.map((x) => Number(x.waitMs));
    return {
      db: dbName,
      ...r,
      statementsPerFlow: flowStatements / o.instances,
      writesPerFlow: (probe.socketWrites - writesBefore) / o.instances,
      notifiesPerFlow: flowNotifies / o.instances,
      loopP50: loop.percentile(50) / 1e6,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      waited,
      served,
      steps: [...steps].map(([k, xs]) => ({ step: k, n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) })),
      anatomy: anatomySummary(),
      statementsByOrigin,
      elu,
      serviceCpuMsPerFlow: (1000 * serviceCpuSec) / o.instances,
      dbCpuMsPerFlow: dbCpuSec === undefined ? undefined : (1000 * dbCpuSec) / o.instances,
      taskRuns: taskRuns.length,
      overheadMean: overhead.reduce((a, b) => a + b, 0) / Math.max(1, overhead.length),
      overheadP50: pct(overhead, 50),
      overheadP99: pct(overhead, 99),
      modelP50: pct(model, 50),
      runsCompleted: runs.filter((x) => x.status === 'completed').length,
      runP50: pct(runMs, 50),
      runWaitP50: pct(runWaitMs, 50),
      runWaitP99: pct(runWaitMs, 99),
      runP99: pct(runMs, 99),
    };
  } finally {
    await load.close();
    await close();
  }
}
