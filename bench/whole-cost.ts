// The whole cost of an operation (issue 61): the CPU a chat turn, an ingest watched by observers
// and a memory search cost the service and PostgreSQL, counted from outside (/proc) over all the
// work each causes: the background embeddings, jobs, webhook deliveries and socket deliveries
// that follow it, not only the request's own path (bench/chat.ts measures that).
//
// Each code (this checkout, or two checkouts --a and --b, for an A/B in one run) runs its own
// service, `node --import tsx src/main.ts` from the checkout's directory, as a process (or with
// --nodes 2 two) of its own, on a database of its own: PostgreSQL on DATABASE_URL's server, or
// PGlite (--db pglite, embedded: the database's thread is then inside the service's process).
// One model server answers every code at once (bench/system/model-server.ts, no delay: replies
// streamed token by token, embeddings by hashing), in a process of its own, not counted.
// Seeded through the public API (users, observers, each user's memories), each code is warmed up
// with a batch of each operation, then each round runs a batch of each operation on each code in
// turn (the order of the codes alternating by round). A batch (bench/whole-cost/measure.ts):
// a few operations to open the pool's connections, quiet, the idle CPU over --idle-ms, then the
// batch and everything it causes, until quiet again; the idle CPU over that time is subtracted.
// PostgreSQL's figure is its backends serving the code's database; the server's shared processes
// (WAL writer, checkpointer) are shown apart, as they also serve every other session on it.
// Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/whole-cost.ts
//        [--a <checkout> --b <checkout>] [--db pglite] [--nodes 2] [--rounds 3] [--help]
// WHOLE_COST_CPU_PROFILE=<dir> has each service write its CPU profile (its whole life) there.
// Talks only to 127.0.0.1; stops its processes and drops its databases at the end.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { baseEnv, spawnTs, type Child } from '../test/child-process.js';
import { CpuMeter } from './whole-cost/cpu.js';
import { measureBatch, measureIdle, type Code, type Settings } from './whole-cost/measure.js';
import { startNode, stopNode, type Node } from './whole-cost/nodes.js';
import { Clients, type Kind } from './whole-cost/ops.js';
import { parseOptions } from './whole-cost/options.js';
import { report, type Row } from './whole-cost/report.js';
import { modelEnv } from './system/model-server.js';
import { dropDatabase, freshDatabase } from './system/postgres.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const o = parseOptions(process.argv.slice(2), here);
const say = (line: string) => process.stderr.write(`whole-cost: ${line}\n`);
const settings: Settings = { quietMs: o.quietMs, idleMs: o.idleMs, settleMaxMs: o.settleMaxMs };
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');

let model: Child | undefined;
const nodes: Node[] = [];
const codes: Code[] = [];
const databases: string[] = [];

async function cleanup() {
  for (const c of codes) {
    c.clients.close();
    await c.db?.end().catch(() => undefined);
  }
  await Promise.all(nodes.map((n) => stopNode(n).catch(() => undefined)));
  model?.kill('SIGKILL');
  for (const d of databases) await dropDatabase(o.adminUrl!, d).catch(() => undefined);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => void cleanup().then(() => process.exit(130)));

/** The commit a checkout is at (and whether its tracked files differ from it). */
function commitOf(root: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+changes' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/** A database URL on the server of `admin` for `database`. */
function urlOf(admin: string, database: string) {
  const u = new URL(admin);
  u.pathname = `/${database}`;
  return u.toString();
}

async function setUp(label: string, root: string, k: number, modelUrl: string): Promise<Code> {
  const database = `bench_whole_${String.fromCharCode(97 + k)}`;
  const env: Record<string, string> = { ...modelEnv(modelUrl, 256) };
  let db: pg.Client | undefined;
  if (o.db === 'postgres') {
    await freshDatabase(o.adminUrl!, database);
    databases.push(database);
    env.DATABASE_URL = urlOf(o.adminUrl!, database);
  }
  const mine: Node[] = [];
  // One after the other: two nodes starting at once on a fresh database race at pg-boss's install.
  for (let n = 0; n < o.nodes; n++) {
    const node = await startNode(root, `${label}-${n}`, env);
    nodes.push(node);
    mine.push(node);
  }
  const exclude = new Set<number>();
  if (env.DATABASE_URL) {
    db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    exclude.add((await db.query<{ pid: number }>('select pg_backend_pid() pid')).rows[0]!.pid);
  }
  const clients = new Clients(mine.map((n) => n.url));
  const code: Code = {
    label,
    clients,
    meter: new CpuMeter(
      mine.map((n) => n.pid),
      o.db === 'postgres' ? database : undefined,
      exclude,
    ),
    db,
    // Until measured: a generous allowance (5 % of a core) for the first quiet.
    idle: { t: 1, service: 0.05 * o.nodes, pglite: 0.05, pgOurs: 0.05, pgShared: 0 },
  };
  codes.push(code);
  const t0 = performance.now();
  await clients.seed(o.users, o.memories, o.seedConcurrency, (l) => say(`${label}: ${l}`));
  await clients.connect(o.chatClients, o.observers, o.webhook);
  // A bulk load leaves the planner's statistics stale: measure the steady state a running service
  // is in (the server's autovacuum may be off).
  await db?.query('vacuum analyze');
  say(`${label} (${root}): seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return code;
}

const batchSize = (kind: Kind) => (kind === 'chat' ? o.turns : kind === 'ingest' ? o.ingests : o.searches);
const concurrency = (kind: Kind) =>
  kind === 'chat' ? o.chatClients : kind === 'ingest' ? o.ingestConcurrency : o.searchConcurrency;

async function main() {
  const startLoad = load();
  model = spawnTs(
    fileURLToPath(new URL('./system/model-server.ts', import.meta.url)),
    [JSON.stringify({ firstTokenMs: 0, tokensPerSecond: 1e9, replyTokens: 40, embedMs: 0 })],
    baseEnv(),
    { failsafeMs: 24 * 3600_000 },
  );
  const modelUrl = (await model.waitFor(/"url":"([^"]+)"/))[1]!;
  const labels = o.codes.map((c) => `${c.label} (${commitOf(c.root)})`);
  for (const [k, c] of o.codes.entries()) await setUp(labels[k]!, c.root, k, modelUrl);
  // Warm-up: a batch of each operation on each code (not counted), then each code's idle rates.
  for (const code of codes) {
    for (const kind of o.kinds) await code.clients.run(kind, batchSize(kind), concurrency(kind));
    code.idle = await measureIdle(code, settings, 10_000);
    say(
      `${code.label}: idle ${(1000 * code.idle.service).toFixed(0)} ms/s service, ${(1000 * code.idle.pgOurs).toFixed(0)} ms/s PostgreSQL`,
    );
  }
  const rows: Row[] = [];
  for (let round = 1; round <= o.rounds; round++)
    for (const kind of o.kinds) {
      const order = round % 2 === 1 ? codes : [...codes].reverse();
      for (const code of order) {
        const batch = await measureBatch(code, kind, batchSize(kind), concurrency(kind), settings);
        rows.push({ code: code.label, round, batch });
        say(
          `round ${round} ${kind} ${code.label}: ${((batch.cpu.service + batch.cpu.pgOurs) / batch.ops).toFixed(2)} ms/op (service ${(batch.cpu.service / batch.ops).toFixed(2)}), counted ${batch.intervals.map((i) => `${(i.t / 1000).toFixed(1)} s (${(i.service + i.pgOurs).toFixed(0)} ms)`).join(' + ')}, waited ${(batch.waitedMs / 1000).toFixed(0)} s`,
        );
      }
    }
  const pglite = o.db === 'pglite';
  const batches = o.kinds.map((kind) =>
    kind === 'chat'
      ? `${o.turns} chat turns over ${o.chatClients} sockets`
      : kind === 'ingest'
        ? `${o.ingests} ingests (${o.ingestConcurrency} in flight) to ${o.observers} observer sockets${o.webhook ? ' and a webhook' : ''}`
        : `${o.searches} searches (${o.searchConcurrency} in flight)`,
  );
  process.stdout.write(
    [
      `## Whole cost per operation, ${new Date().toISOString().slice(0, 10)}`,
      '',
      `\`npx tsx bench/whole-cost.ts ${process.argv.slice(2).join(' ')}\`: ${labels.join(' and ')}; ` +
        `${pglite ? 'PGlite (embedded: the database thread is inside the service process)' : `PostgreSQL, ${o.nodes} node${o.nodes > 1 ? 's' : ''} per code`}; ` +
        `${o.users} users × ${o.memories} memories; batches of ${batches.join(', ')}; ` +
        `${o.rounds} rounds. ` +
        `Machine: ${cpus().length} cores, load average ${startLoad} at the start, ${load()} at the end (1 / 5 / 15 min).`,
      '',
      ...report(rows, o.kinds, pglite, labels, codes[0]!.clients.deliveriesPerIngest),
    ].join('\n'),
  );
}

try {
  await main();
} catch (err) {
  say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  for (const n of nodes) say(`node ${n.url} said: ${n.output().slice(-2000)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
process.exit(process.exitCode ?? 0);
