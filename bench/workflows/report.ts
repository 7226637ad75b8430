// The workflows bench's report: its results on each database as Markdown tables (the flows'
// throughput and run times, the service process's statements, waits, steps and writes' anatomy,
// each request's latency, the load generator's loop and the audit log's service times).
import type { Options, run } from './run.js';

/** Prints the tables of `results` (one per database) to stdout. */
export function printReport(o: Options, results: Awaited<ReturnType<typeof run>>[]): void {
  console.log(
    `\n${o.instances} documentation-flow instances, ${o.parallel} at once, think time ${o.thinkMs} ms mean, 3 tasks each (orchestrator concurrency 3), model server answering at once\n`,
  );
  console.log(
    '| db | flows | failed | wall s | requests/s | transitions/s | run (queued → finished) p50 / p99 ms | run queued → started p50 / p99 ms | task overhead mean / p50 / p99 ms | model ms/task p50 |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.db} | ${o.instances} | ${r.failures} | ${r.wallSec.toFixed(1)} | ${(r.requests / r.wallSec).toFixed(0)} | ${(r.transitions / r.wallSec).toFixed(1)} | ${r.runP50.toFixed(0)} / ${r.runP99.toFixed(0)} | ${r.runWaitP50.toFixed(0)} / ${r.runWaitP99.toFixed(0)} | ${r.overheadMean.toFixed(1)} / ${r.overheadP50.toFixed(1)} / ${r.overheadP99.toFixed(1)} | ${r.modelP50.toFixed(1)} |`,
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
        `| ${r.db} | ${k} | ${perFlow.toFixed(1)} | ${calls === undefined ? '–' : (calls / o.instances).toFixed(1)} | ${calls === undefined ? '–' : ((perFlow * o.instances) / calls).toFixed(1)} |`,
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
}
