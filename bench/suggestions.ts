// Suggestions (issue 21): GET /api/suggestions/<contextId>, its generation pass included, with
// --stored suggestions (default 10,000) across --contexts contexts (default 1,000 workflow
// instances of --users creators). The contexts are a mix: a third in intake without tasks, a third
// with three pending tasks, a third with two ready artifacts; each has had one GET (its active
// suggestions exist) and history rows fill the table up to --stored (declined, executed, expired),
// so each pass compares what holds against about ten stored rows and, the context unchanged,
// writes nothing. The load generator (HTTP clients) runs in a worker thread, off the service's
// event loop. The node runs SERVICES=api: the passes enqueued by the seeding's writes stay queued
// instead of running beside the measurement.
// Reports per database: --requests GETs to random contexts one at a time (latency p50/p95/p99),
// then the same number from --parallel clients at once (p99, requests per second).
// Run: npx tsx bench/suggestions.ts [--contexts 1000] [--stored 10000] [--users 100] [--requests 3000] [--parallel 8] [--only pglite|postgres]
// Runs on PGlite, and on PostgreSQL too when DATABASE_URL is set. Talks only to 127.0.0.1.
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { onEachDatabase } from './databases.js';
import { pct } from './percentile.js';
import { answerCommands, startCommandWorker } from './worker-commands.js';

const { values } = parseArgs({
  options: {
    contexts: { type: 'string', default: '1000' },
    stored: { type: 'string', default: '10000' },
    users: { type: 'string', default: '100' },
    requests: { type: 'string', default: '3000' },
    parallel: { type: 'string', default: '8' },
    only: { type: 'string' },
  },
});
const CONTEXTS = Number(values.contexts);
const STORED = Number(values.stored);
const USERS = Number(values.users);
const REQUESTS = Number(values.requests);
const PARALLEL = Number(values.parallel);

// ---- load generator (worker thread) -------------------------------------------------------------

interface GetCommand {
  cmd: 'get';
  url: string;
  /** [token, contextId] per context. */
  targets: [string, string][];
  requests: number;
  clients: number;
}
type Command = GetCommand | { cmd: 'close' };

async function loadGenerator() {
  answerCommands<Command>({}, async (m) => (m.cmd === 'close' ? undefined : gets(m)));
}

async function gets(c: GetCommand) {
  const times: number[] = [];
  let failures = 0;
  let returned = 0;
  let next = 0;
  const one = async (n: number) => {
    const [token, contextId] = c.targets[(n * 7919) % c.targets.length]!;
    const t0 = performance.now();
    const res = await fetch(`${c.url}/api/suggestions/${contextId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body: any = await res.json();
    times.push(performance.now() - t0);
    if (res.status !== 200) {
      failures++;
      if (failures <= 3)
        process.stderr.write(`GET ${contextId}: ${res.status} ${body.code} ${body.detail}\n`);
    } else returned += body.suggestions.length;
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c.clients }, async () => {
      for (let n = next++; n < c.requests; n = next++) await one(n);
    }),
  );
  const wallSec = (performance.now() - started) / 1000;
  return {
    n: times.length,
    failures,
    meanReturned: returned / Math.max(1, times.length - failures),
    p50: pct(times, 50),
    p95: pct(times, 95),
    p99: pct(times, 99),
    max: Math.max(...times),
    perSecond: times.length / wallSec,
  };
}

// ---- the service (main thread) ------------------------------------------------------------------

async function run(dbName: string, env: Record<string, string | undefined>) {
  const load = await startCommandWorker<Command>(new URL(import.meta.url));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    DB_POOL_SIZE: '20',
    SERVICES: 'api',
    ...env,
  });
  const deps = await createDeps(config);
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const s = deps.services;
    const seedStarted = performance.now();
    const creators: { actor: { id: number; name: string; admin: boolean }; token: string }[] = [];
    for (let u = 0; u < USERS; u++) {
      const row = await s.users.create({ email: null, password: null, name: `Creator ${u}` });
      creators.push({
        actor: { id: row.id, name: row.name, admin: false },
        token: (await s.auth.issue(row, 'web_portal')).accessToken,
      });
    }
    const targets: [string, string][] = [];
    for (let n = 0; n < CONTEXTS; n++) {
      const { actor, token } = creators[n % USERS]!;
      const i = await s.workflows.create(actor, {
        machineId: n % 2 ? 'documentation_flow_v1' : 'triage_flow_v1',
        context: { title: `Bench ${n}` },
      });
      if (n % 3 === 1)
        await s.workflowTasks.createTasks(deps.db, i.id, [
          { title: 'Docs', specialty: 'docs' },
          { title: 'Code', specialty: 'code' },
          { title: 'Tests', specialty: 'tests' },
        ]);
      if (n % 3 === 2)
        for (const summary of ['Draft A', 'Draft B']) {
          const a = await s.workflowTasks.createDraftArtifact(deps.db, {
            instanceId: i.id,
            taskId: null,
            personaId: null,
            summary,
          });
          await s.workflowTasks.markArtifactReady(deps.db, a.id, `content of ${summary}`);
        }
      // The context's first pass: its active suggestions (VIEW_ARTIFACTS runs by itself).
      await s.suggestions.list(actor, i.id);
      targets.push([token, i.id]);
    }
    // History up to --stored rows, spread over the contexts: older visits' suggestions, answered.
    const { n: existing } = await deps.db
      .selectFrom('suggestions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const missing = Math.max(0, STORED - Number(existing));
    await sql`
      with ctx as (
        select id, created_by_user_id, channel_id, protocol_id, row_number() over (order by id) - 1 as k
        from workflow_instances)
      insert into suggestions (user_id, context_id, key, type, message, confidence, priority, metadata,
        actions, ttl, instance_id, channel_id, protocol_id, state, state_visit, status, expired_reason,
        action_type, response_time_ms, executed_at, execution_time_ms, created_at)
      select c.created_by_user_id, c.id::text, 'RUN_ORCHESTRATOR|old-' || g || '|' || c.id || '@0',
        'RUN_ORCHESTRATOR', 'Run the orchestrator on 3 pending tasks', 0.8, 70, '{"source":"trigger"}',
        '[{"type":"EXECUTE","label":"Run","params":{"runTasks":true}},{"type":"CANCEL","label":"Dismiss","params":{}}]',
        3600, c.id, c.channel_id, c.protocol_id, 'old', 0,
        (array['expired','executed','declined'])[1 + g % 3],
        case when g % 3 = 0 then (array['trigger','ttl','cleared'])[1 + (g / 3) % 3] end,
        case when g % 3 = 1 then 'EXECUTE' end,
        case when g % 3 > 0 then 1200 end,
        case when g % 3 = 1 then now() - make_interval(hours => g) end,
        case when g % 3 = 1 then 35.5 end,
        now() - make_interval(hours => g + 1)
      from generate_series(0, ${missing}::int - 1) g
      join ctx c on c.k = g % ${CONTEXTS}::int
    `.execute(deps.db);
    const { n: stored } = await deps.db
      .selectFrom('suggestions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    // A bulk load leaves the planner's statistics stale: measure the steady state.
    for (const table of [
      'suggestions',
      'suggestion_configs',
      'suggestion_contexts',
      'workflow_instances',
      'workflow_tasks',
      'workflow_artifacts',
      'workflow_approvals',
      'timeline_events',
    ])
      await sql`vacuum analyze ${sql.table(table)}`.execute(deps.db);
    await sql`checkpoint`.execute(deps.db);
    const seedSec = (performance.now() - seedStarted) / 1000;

    const sequential = await load.send<Awaited<ReturnType<typeof gets>>>({
      cmd: 'get',
      url,
      targets,
      requests: REQUESTS,
      clients: 1,
    });
    const parallel = await load.send<Awaited<ReturnType<typeof gets>>>({
      cmd: 'get',
      url,
      targets,
      requests: REQUESTS,
      clients: PARALLEL,
    });
    return { db: dbName, stored: Number(stored), seedSec, sequential, parallel };
  } finally {
    await load.close();
    await app.close();
    await deps.close();
  }
}

if (!isMainThread) await loadGenerator();
else {
  const results = await onEachDatabase('bench_sg', values.only, run);
  console.log(
    `\nGET /api/suggestions/<contextId> (generation pass included): ${CONTEXTS} contexts of ${USERS} users, ${REQUESTS} requests per phase\n`,
  );
  console.log(
    '| db | stored | clients | requests | failed | suggestions/GET | p50 ms | p95 ms | p99 ms | max ms | req/s |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results)
    for (const [clients, m] of [
      [1, r.sequential],
      [PARALLEL, r.parallel],
    ] as const)
      console.log(
        `| ${r.db} | ${r.stored} | ${clients} | ${m.n} | ${m.failures} | ${m.meanReturned.toFixed(1)} | ${m.p50.toFixed(1)} | ${m.p95.toFixed(1)} | ${m.p99.toFixed(1)} | ${m.max.toFixed(1)} | ${m.perSecond.toFixed(0)} |`,
      );
  for (const r of results) console.log(`\n${r.db}: seeding took ${r.seedSec.toFixed(1)} s`);
  process.exit(0);
}
