// Chat turn overhead (issue 5): connected Socket.IO clients send chatMessage against a local
// OpenAI-compatible model server that answers at once, while each user has many memories.
// After a warm-up turn per client, two phases per database:
//  1. latency at a steady rate (--rate turns/s spread over all clients, for --seconds): the turn
//     time (chatMessage sent → final assistantResponse), the model calls' own time (the gateway's
//     recorded latency of the chat and embedding calls, loopback HTTP included), and the
//     server-side overhead = turn − model time;
//  2. throughput: every client sends --turns messages back to back; turns per second, and the
//     CPU time per turn of the service's main thread and (PGlite) its database thread.
// The load generator (the clients) and the model server run in a worker thread, as they would
// run on other machines: the service's event loop is its own, though all three share the
// machine's cores (and PostgreSQL's). Two overhead figures: the clients' view (turn time minus the
// turn's mean model time, loopback and the client's own decoding included), and the service's
// own per-turn figure (chat_turn_overhead_seconds: chatMessage received → last response sent,
// minus that turn's model calls), the one the issue's targets are about.
// The memories' text comes from one of two corpora (--corpus):
//  - varied (default): sentences of 12 words drawn from 5,000 made-up content words with a
//    Zipf-Mandelbrot law (the commonest word is in about 5% of memories, most in well under 1%),
//    like the content words of real conversation once full text search drops the stop words;
//  - narrow: 20 words, each in 60% of the memories, so every query matches about 85% of a user's
//    memories: the worst case for the full-text side, which ranks every match.
// Run: npx tsx bench/chat.ts [--clients 200] [--users 20] [--memories 10000] [--rate 20] [--seconds 10] [--turns 3] [--corpus varied|narrow] [--only pglite|postgres]
// Runs on PGlite, and on PostgreSQL too when DATABASE_URL is set. Talks only to 127.0.0.1.
// CHAT_CPU_PROFILE=/tmp/chat.cpuprofile writes the service thread's CPU profile of phase 2 to
// /tmp/chat.cpuprofile.<db> (open it in Chrome's DevTools).
// CHAT_STATEMENT_TIMES=1 prints which statements held the database longest over phase 2.
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { io as connect, type Socket } from 'socket.io-client';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { startFakeModelServer } from '../test/fake-model-server.js';
import { onEachDatabase } from './databases.js';
import { answerCommands, startCommandWorker } from './worker-commands.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '200' },
    users: { type: 'string', default: '20' },
    memories: { type: 'string', default: '10000' },
    turns: { type: 'string', default: '3' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
    corpus: { type: 'string', default: 'varied' },
    only: { type: 'string' },
  },
});
const CLIENTS = Number(values.clients);
const USERS = Number(values.users);
const MEMORIES = Number(values.memories);
const TURNS = Number(values.turns);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);

const NARROW =
  'dragon sword castle river forest potion merchant quest gold silver ember winter harbor lantern map tower bridge wolf raven crown'.split(
    ' ',
  );

/** A deterministic pseudo-random sequence (the same corpus on every run and database). */
function prng(seed: number) {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

/** 5,000 distinct made-up words of two to four syllables, and a sampler following the
 * Zipf-Mandelbrot law p(rank) ∝ 1 / (rank + 50). */
function variedVocabulary() {
  const rnd = prng(7);
  const onsets = 'b c d f g h j k l m n p r s t v w z br dr gr kl pl st tr'.split(' ');
  const vowels = 'a e i o u ai ea ou'.split(' ');
  const words = new Set<string>();
  while (words.size < 5000) {
    const syllables = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let k = 0; k < syllables; k++)
      w += onsets[Math.floor(rnd() * onsets.length)]! + vowels[Math.floor(rnd() * vowels.length)]!;
    words.add(w + 'n');
  }
  const list = [...words];
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= list.length; r++) cumulative.push((sum += 1 / (r + 50)));
  return (u: number) => {
    const target = u * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return list[lo]!;
  };
}

const CORPUS = values.corpus === 'narrow' ? 'narrow' : 'varied';
const pick = variedVocabulary();
/** The text of memory i, and the question of turn n. */
const sentence =
  CORPUS === 'narrow'
    ? (i: number) =>
        Array.from({ length: 12 }, (_, k) => NARROW[(i * 7 + k * 13) % NARROW.length]).join(' ') +
        ` note ${i}.`
    : (i: number) => {
        const rnd = prng(i + 1);
        return Array.from({ length: 12 }, () => pick(rnd())).join(' ') + ` note ${i}.`;
      };
const question =
  CORPUS === 'narrow'
    ? (n: number) => `${NARROW[n % NARROW.length]} and the ${NARROW[(n * 3) % NARROW.length]}?`
    : (n: number) => {
        const rnd = prng(1_000_003 + n);
        return `what about the ${pick(rnd())} and the ${pick(rnd())}?`;
      };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** The worker's commands (main → worker) and answers. */
type Command =
  | { cmd: 'connect'; url: string; tokens: string[] }
  | { cmd: 'warmup' }
  | { cmd: 'steady'; rate: number; seconds: number }
  | { cmd: 'burst'; turns: number }
  | { cmd: 'close' };

/** The worker: the model server, then the clients on command. */
async function loadGenerator() {
  const fake = await startFakeModelServer();
  let sockets: Socket[] = [];
  // One turn on a socket: resolves with its duration once the (last) response arrived.
  const turn = (s: Socket, n: number) =>
    new Promise<{ ms: number; ok: boolean }>((resolve) => {
      const t0 = performance.now();
      const done = (ok: boolean) => () => {
        s.off('assistantResponse', onResponse);
        s.off('chatError', onError);
        resolve({ ms: performance.now() - t0, ok });
      };
      const onResponse = done(true);
      const onError = done(false);
      s.on('assistantResponse', onResponse);
      s.on('chatError', onError);
      s.emit('chatMessage', {
        message: question(n),
        preferences: { stream: false },
      });
    });
  const handlers = {
    async connect({ url, tokens }: { url: string; tokens: string[] }) {
      for (const token of tokens) {
        const s = connect(url, {
          auth: { token },
          transports: ['websocket'],
          reconnection: false,
          forceNew: true,
        });
        await new Promise<void>((resolve, reject) => {
          s.on('connect', () => resolve());
          s.on('connect_error', reject);
        });
        sockets.push(s);
      }
      return null;
    },
    async warmup() {
      await Promise.all(sockets.map((s, c) => turn(s, 1_000_000 + c)));
      return null;
    },
    // A steady rate, each turn on the next idle client.
    async steady({ rate, seconds }: { rate: number; seconds: number }) {
      const measured: { n: number; ms: number }[] = [];
      let failures = 0;
      const busy = new Set<number>();
      const inflight: Promise<void>[] = [];
      const total = Math.round(rate * seconds);
      const start = performance.now();
      for (let n = 0; n < total; n++) {
        const due = start + (n * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        let c = n % sockets.length;
        for (let k = 0; k < sockets.length && busy.has(c); k++) c = (c + 1) % sockets.length;
        busy.add(c);
        inflight.push(
          turn(sockets[c]!, n).then((r) => {
            busy.delete(c);
            if (r.ok) measured.push({ n, ms: r.ms });
            else failures++;
          }),
        );
      }
      await Promise.all(inflight);
      return { measured, failures };
    },
    // Every client back to back.
    async burst({ turns }: { turns: number }) {
      const t0 = performance.now();
      let done = 0;
      await Promise.all(
        sockets.map(async (s, c) => {
          for (let i = 0; i < turns; i++) if ((await turn(s, c + i)).ok) done++;
        }),
      );
      return { done, seconds: (performance.now() - t0) / 1000 };
    },
    async close() {
      for (const s of sockets) s.close();
      sockets = [];
      await fake.close();
      return null;
    },
  };
  answerCommands<Command>(fake.env(), (m) => {
    const { cmd, ...args } = m;
    return (handlers[cmd] as (a: typeof args) => Promise<unknown>)(args);
  });
}

// Every statement the service's process sends (its pool's, pg-boss's, the background workers'),
// counted by wrapping node-postgres's client: on PGlite, whose one connection serves them one at a
// time, statements per turn is what bounds the turns per second.
let statements = 0;

/** CPU milliseconds each named thread of this process has used (Linux: /proc/self/task/<id>/stat,
 * utime + stime in clock ticks of 10 ms); the service's threads are `MainThread` and `pglite`. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const id of tasks) {
    try {
      const name = readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/self/task/${id}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      out.set(name, (out.get(name) ?? 0) + ms);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
const statementTimes = process.env.CHAT_STATEMENT_TIMES
  ? new Map<string, { n: number; ms: number }>()
  : undefined;
if (isMainThread) {
  const proto = pg.Client.prototype as unknown as { query: (this: pg.Client, ...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    statements++;
    if (!statementTimes) return query.apply(this, args);
    // CHAT_STATEMENT_TIMES=1: time from send to answer per statement text (queueing in the
    // client included), summed, to find which statements hold PGlite's one connection longest.
    const first = args[0] as string | { text?: string } | undefined;
    const text = (typeof first === 'string' ? first : (first?.text ?? '?'))
      .replace(/\s+/g, ' ')
      .slice(0, 110);
    const start = performance.now();
    const done = () => {
      const t = statementTimes.get(text) ?? { n: 0, ms: 0 };
      t.n++;
      t.ms += performance.now() - start;
      statementTimes.set(text, t);
    };
    const last = args.at(-1);
    if (typeof last === 'function')
      args[args.length - 1] = (...cb: unknown[]) => {
        done();
        return (last as (...a: unknown[]) => unknown)(...cb);
      };
    const result = query.apply(this, args);
    if (typeof last !== 'function' && result && typeof (result as Promise<unknown>).then === 'function')
      (result as Promise<unknown>).then(done, done);
    return result;
  };
}

async function run(dbName: string, env: Record<string, string | undefined>) {
  const load = await startCommandWorker<Command>(new URL(import.meta.url));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    CHAT_RATE_LIMIT: '1000000',
    DB_POOL_SIZE: '20',
    // PGVECTOR=off npx tsx bench/chat.ts: PGlite on the sketch index instead of pgvector.
    ...(process.env.PGVECTOR ? { PGVECTOR: process.env.PGVECTOR } : {}),
    ...load.env,
    ...env,
  });
  const deps = await createDeps(config);
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    // Users and their memories (shared tier), embedded through the model server.
    const users: { row: { id: number }; token: string }[] = [];
    for (let u = 0; u < USERS; u++) {
      const row = await deps.services.users.create({
        email: `chat-bench-${u}-${randomBytes(3).toString('hex')}@example.test`,
        password: null,
        name: `Player ${u}`,
      });
      users.push({ row, token: (await deps.services.auth.issue(row, 'game_client')).accessToken });
    }
    const seedStart = performance.now();
    for (const { row } of users) {
      for (let i = 0; i < MEMORIES; i += 1000) {
        await deps.services.memory.addMemories(
          Array.from({ length: Math.min(1000, MEMORIES - i) }, (_, k) => ({
            userId: row.id,
            source: 'shared' as const,
            content: sentence(row.id * MEMORIES + i + k),
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
      `${dbName}: seeded ${USERS * MEMORIES} memories (${CORPUS} corpus) in ${seedSec.toFixed(0)} s\n`,
    );

    // Clients: CLIENTS sockets spread over the users.
    await load.send({
      cmd: 'connect',
      url,
      tokens: Array.from({ length: CLIENTS }, (_, c) => users[c % USERS]!.token),
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
    await counted(CLIENTS);

    // Phase 1: a steady rate.
    await deps.models.flush();
    await deps.db.deleteFrom('model_calls').execute();
    deps.metrics.chatTurnOverhead.reset();
    // The service's event loop delay over phase 1: a long stall there (a garbage collection,
    // synchronous work) shows up in every turn it overlaps.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const statementsBefore = statements;
    const { measured, failures } = await load.send<{
      measured: { n: number; ms: number }[];
      failures: number;
    }>({ cmd: 'steady', rate: RATE, seconds: SECONDS });
    loopDelay.disable();
    const latency = measured.map((m) => m.ms);
    await counted(measured.length);
    const phaseStatements = statements - statementsBefore;
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
    const burst = await load.send<{ done: number; seconds: number }>({ cmd: 'burst', turns: TURNS });
    // CPU per turn of the service's threads: what bounds turns/s on a machine of its own, and
    // unlike turns/s barely moved by other processes sharing the cores.
    const cpuAfter = threadCpu();
    const cpuPerTurn = (name: string) =>
      ((cpuAfter.get(name) ?? 0) - (cpuBefore.get(name) ?? 0)) / burst.done;
    if (statementTimes) {
      const rows = [...statementTimes].sort((a, b) => b[1].ms - a[1].ms);
      const total = rows.reduce((n, [, t]) => n + t.ms, 0);
      process.stderr.write(
        `${dbName}: statement time over phase 2, ${(total / burst.done).toFixed(2)} ms per turn:\n`,
      );
      for (const [text, t] of rows.slice(0, 25))
        process.stderr.write(
          `  ${((100 * t.ms) / total).toFixed(1).padStart(5)}% ${(t.n / burst.done).toFixed(2)}/turn ${(t.ms / t.n).toFixed(2)} ms  ${text}\n`,
        );
    }
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
    await app.close();
    await deps.close();
  }
}

if (!isMainThread) await loadGenerator();
else {
  const results = await onEachDatabase('bench_chat', values.only, run);
  console.log(
    `\n${CLIENTS} clients over ${USERS} users, ${MEMORIES} memories per user (${CORPUS} corpus); latency at ${RATE} turns/s for ${SECONDS} s; throughput with ${TURNS} back-to-back turns per client; model server answering at once\n`,
  );
  console.log(
    '| db | turns | failed | max turns/s | turn p50 ms | turn p99 ms | model ms/turn | overhead p50 ms | overhead p99 ms | server-side overhead p50 ms | server-side overhead p99 ms | chat calls/turn | embedding calls/turn | statements/turn | service CPU ms/turn (main / PGlite thread) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.db} | ${r.turns} | ${r.failures} | ${r.turnsPerSec.toFixed(1)} | ${r.turnP50.toFixed(1)} | ${r.turnP99.toFixed(1)} | ${r.modelMsPerTurn.toFixed(1)} | ${r.overheadP50.toFixed(1)} | ${r.overheadP99.toFixed(1)} | ${r.serverOverheadP50.toFixed(1)} | ${r.serverOverheadP99.toFixed(1)} | ${r.chatCallsPerTurn.toFixed(2)} | ${r.embedCallsPerTurn.toFixed(2)} | ${r.statementsPerTurn.toFixed(1)} | ${r.mainCpuPerTurn.toFixed(1)} / ${Number.isNaN(r.pgliteCpuPerTurn) ? '–' : r.pgliteCpuPerTurn.toFixed(1)} |`,
    );
  process.exit(0);
}
