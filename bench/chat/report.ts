// The chat bench's report: its results on each database as one Markdown table (turns, their
// latency and overhead, the model calls and statements per turn, the service's CPU per turn).
import type { Options, run } from './run.js';

/** Prints the table of `results` (one row per database) to stdout. */
export function printReport(o: Options, results: Awaited<ReturnType<typeof run>>[]): void {
  console.log(
    `\n${o.clients} clients over ${o.users} users, ${o.memories} memories per user (${o.corpus} corpus); latency at ${o.rate} turns/s for ${o.seconds} s; throughput with ${o.turns} back-to-back turns per client; model server answering at once\n`,
  );
  console.log(
    '| db | turns | failed | max turns/s | turn p50 ms | turn p99 ms | model ms/turn | overhead p50 ms | overhead p99 ms | server-side overhead p50 ms | server-side overhead p99 ms | chat calls/turn | embedding calls/turn | statements/turn | service CPU ms/turn (main / PGlite thread) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.db} | ${r.turns} | ${r.failures} | ${r.turnsPerSec.toFixed(1)} | ${r.turnP50.toFixed(1)} | ${r.turnP99.toFixed(1)} | ${r.modelMsPerTurn.toFixed(1)} | ${r.overheadP50.toFixed(1)} | ${r.overheadP99.toFixed(1)} | ${r.serverOverheadP50.toFixed(1)} | ${r.serverOverheadP99.toFixed(1)} | ${r.chatCallsPerTurn.toFixed(2)} | ${r.embedCallsPerTurn.toFixed(2)} | ${r.statementsPerTurn.toFixed(1)} | ${r.mainCpuPerTurn.toFixed(1)} / ${Number.isNaN(r.pgliteCpuPerTurn) ? '–' : r.pgliteCpuPerTurn.toFixed(1)} |`,
    );
}
