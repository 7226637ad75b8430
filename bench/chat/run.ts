// The chat bench's run on one database: the service on the main thread (the entry has installed
// its probes), users and their memories seeded, then the load generator's clients
// (bench/chat/load.ts, in a worker thread) measured in two phases: latency at a steady rate, then
// throughput with turns back to back; and the figures gathered from the clients, the service's
// metrics, the probes and the database.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { BenchDatabase } from '../databases.js';
import { startService } from '../service.js';
import { startCommandWorker } from '../worker-commands.js';
import { corpusOf, type CorpusName } from './corpus.js';
import type { Command } from './load.js';
import { printStatementTimes, probe, statementTimes, steadyStatements, threadCpu } from './probes.js';

/** The bench's options (see bench/chat.ts). */
export interface Options {
  clients: number;
  users: number;
  memories: number;
  turns: number;
  rate: number;
  seconds: number;
  corpus: CorpusName;
  /** The replies streamed (delta by delta) instead of whole. */
  stream: boolean;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** Runs both phases on one database (for `onEachDatabase`). */
export async function run(o: Options, dbName: BenchDatabase, env: Record<string, string | undefined>) {
  const { sentence } = corpusOf(o.corpus);
  const load = await startCommandWorker<Command>(new URL('./load.ts', import.meta.url));
  const { deps, url, close } = await startService({
    CHAT_RATE_LIMIT: '1000000',
    DB_POOL_SIZE: '20',
    // PGVECTOR=off npx tsx bench/chat.ts: PGlite on the sketch index instead of pgvector.
    ...(process.env.PGVECTOR ? { PGVECTOR: process.env.PGVECTOR } : {}),
    // MEMORY_RECONCILE=rules npx tsx bench/chat.ts: exchanges reconciled by the offline rules
    // instead of a model call in the background (the default with a model).
    ...(process.env.MEMORY_RECONCILE ? { MEMORY_RECONCILE: process.env.MEMORY_RECONCILE } : {}),
    ...load.env,
    ...env,
  });
  try {
    // Users and their memories (shared tier), embedded through the model server.
    const users: { row: { id: number }; token: string }[] = [];
    for (let u = 0; u < o.users; u++) {
      const row = await deps.services.users.create({
        email: `chat-bench-${u}-${randomBytes(3).toString('hex')}@example.test`,
        password: null,
        name: `Player ${u}`,
      });
      users.push({ row, token: (await deps.services.auth.issue(row, 'game_client')).accessToken });
    }
    const seedStart = performance.now();
    for (const { row } of users) {
      for (let i = 0; i < o.memories; i += 1000) {
        await deps.services.memory.addMemories(
          Array.from({ length: Math.min(1000, o.memories - i) }, (_, k) => ({
            userId: row.id,
            source: 'shared' as const,
            content: sentence(row.id * o.memories + i + k),
          })),
        );
      }
    }
    await deps.jobs.drain(30 * 60_000);
    // A bulk load leaves the planner's statistics stale, autovacuum busy and a checkpoint writing
    // its pages for minutes (commits then wait on a busy disk): measure the steady state a running
    // service is in, not the minutes after a 200,000-row import.
    for (const table of ['memories', 'memory_chunks', 'memory_embeddings', 'memory_embed_queue'])
      await sql`vacuum analyze ${sql.table(table)}`.execute(deps.db);
    await sql`checkpoint`.execute(deps.db);
    const seedSec = (performance.now() - seedStart) / 1000;
    process.stderr.write(
      `${dbName}: seeded ${o.users * o.memories} memories (${o.corpus} corpus) in ${seedSec.toFixed(0)} s\n`,
    );

    // Clients: o.clients sockets spread over the users.
    await load.send({
      cmd: 'connect',
      url,
      corpus: o.corpus,
      stream: o.stream,
      tokens: Array.from({ length: o.clients }, (_, c) => users[c % o.users]!.token),
    });
    // Warm-up, not measured: every client sends one message at once, so the pool has opened all
    // its connections and each has planned the turn's statements once, as in a running service.
    await load.send({ cmd: 'warmup' });
    // A turn is counted once it has ended on the server (after its responses went out, it stores
    // the exchange as a memory): wait for the turns the clients saw answered.
    const counted = async (turns: number) => {
      for (;;) {
        const { values } = await deps.metrics.chatTurnOverhead.get();
        const count = values.find(
          (v) => v.metricName?.endsWith('_count') && v.labels.event === 'chatMessage',
        );
        if ((count?.value ?? 0) >= turns) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await counted(o.clients);

    // Phase 1: a steady rate.
    await deps.models.flush();
    await deps.db.deleteFrom('model_calls').execute();
    deps.metrics.chatTurnOverhead.reset();
    // The service's event loop delay over phase 1: a long stall there (a garbage collection,
    // synchronous work) shows up in every turn it overlaps.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const statementsBefore = probe.statements;
    statementTimes?.clear();
    const { measured, failures } = await load.send<{
      measured: { n: number; ms: number }[];
      failures: number;
    }>({ cmd: 'steady', rate: o.rate, seconds: o.seconds });
    loopDelay.disable();
    const latency = measured.map((m) => m.ms);
    await counted(measured.length);
    const phaseStatements = probe.statements - statementsBefore;
    if (statementTimes && steadyStatements) printStatementTimes(dbName, 'phase 1', measured.length);
    // The service's own figure (chat_turn_overhead_seconds): each turn's time from chatMessage
    // received to its last response sent, minus that turn's model calls.
    const serverQuantiles = await deps.metrics.chatTurnOverhead.get();
    const serverOverhead = (q: number) =>
      1000 *
      (serverQuantiles.values.find(
        (v) => v.labels.event === 'chatMessage' && (v.labels as { quantile?: number }).quantile === q,
      )?.value ?? NaN);
    await deps.models.flush();
    const calls = await deps.db.selectFrom('model_calls').select(['kind', 'latency_ms']).execute();
    const turns = latency.length + failures;
    const modelMsPerTurn = calls.reduce((n, c) => n + c.latency_ms, 0) / Math.max(1, turns);
    const chatCalls = calls.filter((c) => c.kind === 'chat' || c.kind === 'stream').length;
    const embedCalls = calls.filter((c) => c.kind === 'embed').length;

    // Phase 2: throughput. CHAT_CPU_PROFILE=file.cpuprofile records the service's main thread
    // (PGlite included: it runs there) over this phase only, not the seeding.
    const profiler = process.env.CHAT_CPU_PROFILE ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    statementTimes?.clear();
    const cpuBefore = threadCpu();
    const burst = await load.send<{ done: number; seconds: number }>({ cmd: 'burst', turns: o.turns });
    // CPU per turn of the service's threads: what bounds turns/s on a machine of its own, and
    // unlike turns/s barely moved by other processes sharing the cores.
    const cpuAfter = threadCpu();
    const cpuPerTurn = (name: string) =>
      ((cpuAfter.get(name) ?? 0) - (cpuBefore.get(name) ?? 0)) / burst.done;
    if (statementTimes && !steadyStatements) printStatementTimes(dbName, 'phase 2', burst.done);
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(`${process.env.CHAT_CPU_PROFILE}.${dbName}`, JSON.stringify(profile));
      profiler.disconnect();
    }
    const turnsPerSec = burst.done / burst.seconds;
    // Where the tail comes from: the slowest turns of phase 1 and their place in the sequence.
    const tail = measured
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((s) => `#${s.n} ${s.ms.toFixed(0)} ms`);
    process.stderr.write(
      `${dbName}: slowest turns of ${turns}: ${tail.join(', ')}; service event loop delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms\n`,
    );
    return {
      db: dbName,
      turns,
      failures,
      turnsPerSec,
      turnP50: pct(latency, 50),
      turnP99: pct(latency, 99),
      modelMsPerTurn,
      overheadP50: pct(latency, 50) - modelMsPerTurn,
      overheadP99: pct(latency, 99) - modelMsPerTurn,
      serverOverheadP50: serverOverhead(0.5),
      serverOverheadP99: serverOverhead(0.99),
      chatCallsPerTurn: chatCalls / turns,
      embedCallsPerTurn: embedCalls / turns,
      statementsPerTurn: phaseStatements / turns,
      mainCpuPerTurn: cpuPerTurn('MainThread'),
      pgliteCpuPerTurn: dbName === 'pglite' ? cpuPerTurn('pglite') : NaN,
      seedSec,
    };
  } finally {
    await load.close();
    await close();
  }
}
