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
// trip); the load generator's event-loop delay, and each write request's time inside the
// service (received → answer sent, from the audit log), to tell the service's part of a
// request's time from the load generator's;
// WF_TRACE=1 prints every statement (first 160 characters, after where it comes from) to stderr
// (with --instances 1: one flow's statements in order); WF_SLOW=<ms> prints each state-moving write
// slower than that, when it started and its longest statement (to line up with vmstat's seconds).
// Run: npx tsx bench/workflows.ts [--instances 1000] [--parallel N] [--think-ms M] [--only pglite|postgres]
// Runs on PGlite, and on PostgreSQL too when DATABASE_URL is set. Talks only to 127.0.0.1.
// Its parts, in bench/workflows/: load.ts (the load generator's flows, in a worker thread),
// probes.ts (what the service's process is watched with), run.ts (one database's run) and
// report.ts (the tables).
import { parseArgs } from 'node:util';
import { onEachDatabase } from './databases.js';
import { installProbes } from './workflows/probes.js';
import { printReport } from './workflows/report.js';
import { run, type Options } from './workflows/run.js';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '1000' },
    parallel: { type: 'string' },
    'think-ms': { type: 'string', default: '0' },
    only: { type: 'string' },
  },
});
const options: Options = {
  instances: Number(values.instances),
  parallel: Number(values.parallel ?? values.instances),
  // A person or an agent between two steps of a flow: each request waits a uniform random time
  // with this mean first (0: each flow sends its next request as soon as the last answered, so the
  // latencies are queueing at saturation). The think time is not part of any latency.
  thinkMs: Number(values['think-ms']),
};

installProbes();
const results = await onEachDatabase('bench_wf', values.only, (db, env) => run(options, db, env));
printReport(options, results);
process.exit(0);
