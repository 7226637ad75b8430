// The chat bench's probes on the service's process: the statements it sends (node-postgres's
// client wrapped by `installProbes()`, counted in `probe.statements`; with CHAT_STATEMENT_TIMES=1
// their time per statement text too), and the CPU time of each of its named threads.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

// Every statement the service's process sends (its pool's, pg-boss's, the background workers'),
// counted by wrapping node-postgres's client: on PGlite, whose one connection serves them one at a
// time, statements per turn is what bounds the turns per second.
export const probe = { statements: 0 };

/** CPU milliseconds each named thread of a process (this one by default) has used (Linux:
 * /proc/<pid>/task/<id>/stat, utime + stime in clock ticks of 10 ms); the service's threads are
 * `MainThread` and `pglite`. */
export function threadCpu(pid: number | 'self' = 'self'): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const id of tasks) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${id}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/task/${id}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      out.set(name, (out.get(name) ?? 0) + ms);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
/** CHAT_STATEMENT_TIMES=1: each statement text's count and summed time (see `installProbes`). */
export const statementTimes = process.env.CHAT_STATEMENT_TIMES
  ? new Map<string, { n: number; ms: number }>()
  : undefined;
/** CHAT_STATEMENT_TIMES=steady: over phase 1 (turns at a steady rate, each mostly alone, as in
 * a running service) instead of phase 2 (back to back, where concurrent turns share reads). */
export const steadyStatements = process.env.CHAT_STATEMENT_TIMES === 'steady';

/** Prints the statements of a phase, longest held first, each with its count per turn. */
export function printStatementTimes(dbName: string, phase: string, turns: number): void {
  const rows = [...statementTimes!].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((n, [, t]) => n + t.ms, 0);
  process.stderr.write(
    `${dbName}: statement time over ${phase}, ${(total / turns).toFixed(2)} ms per turn:\n`,
  );
  for (const [text, t] of rows.slice(0, 40))
    process.stderr.write(
      `  ${((100 * t.ms) / total).toFixed(1).padStart(5)}% ${(t.n / turns).toFixed(2)}/turn ${(t.ms / t.n).toFixed(2)} ms  ${text}\n`,
    );
}
/** Wraps node-postgres's client; once, on the main thread, before the service starts. */
export function installProbes(): void {
  const proto = pg.Client.prototype as unknown as { query: (this: pg.Client, ...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    probe.statements++;
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
