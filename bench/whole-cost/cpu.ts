// CPU read from outside (Linux /proc, utime + stime in clock ticks of 10 ms): the service's
// processes (all their threads; on PGlite the database's thread among them) and PostgreSQL's,
// split into the backends of the bench's own database (named in each backend's process title,
// `postgres: <cluster>: <user> <database> <host> <state>`) and the server's shared processes (WAL
// writer, checkpointer, background writer, autovacuum, the postmaster), which every session on the
// server keeps busy. A backend lives as long as its connection: one that ends between two polls
// counts with its last reading, one born after the start from zero.
import { readdirSync, readFileSync } from 'node:fs';
import { threadCpu } from '../chat/probes.js';

const TICK_MS = 10;

/** utime + stime of /proc/<pid>/stat in ms; undefined once the process is gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

type PgRole = 'ours' | 'shared' | 'other';
const SHARED = /: (checkpointer|background writer|walwriter|autovacuum|logical replication|archiver)/;

/** PostgreSQL's processes now, by role for `database`; `exclude`: the bench's own connections. */
function postgresProcesses(database: string, exclude: Set<number>) {
  const out: { pid: number; role: PgRole; ms: number }[] = [];
  const ours = new RegExp(`^postgres: (?:\\S+: )?\\S+ ${database} `);
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || exclude.has(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      const ms = processCpuMs(pid);
      if (ms === undefined) continue;
      // The postmaster's title is its command line (…/bin/postgres -D …).
      const role: PgRole = ours.test(title)
        ? 'ours'
        : SHARED.test(title) || !title.startsWith('postgres:')
          ? 'shared'
          : 'other';
      out.push({ pid, role, ms });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** CPU ms used since the meter's start. */
export interface CpuReading {
  /** Monotonic ms. */
  t: number;
  service: number;
  /** The service's PGlite thread (part of `service`). */
  pglite: number;
  pgOurs: number;
  pgShared: number;
}

export const ZERO: CpuReading = { t: 0, service: 0, pglite: 0, pgOurs: 0, pgShared: 0 };

export const minus = (a: CpuReading, b: CpuReading): CpuReading => ({
  t: a.t - b.t,
  service: a.service - b.service,
  pglite: a.pglite - b.pglite,
  pgOurs: a.pgOurs - b.pgOurs,
  pgShared: a.pgShared - b.pgShared,
});

export const plus = (a: CpuReading, b: CpuReading): CpuReading => ({
  t: a.t + b.t,
  service: a.service + b.service,
  pglite: a.pglite + b.pglite,
  pgOurs: a.pgOurs + b.pgOurs,
  pgShared: a.pgShared + b.pgShared,
});

/** Cumulative CPU of a code's service processes and of its database's backends; `poll()` often
 * enough (every 250 ms) that a backend's end loses little. `database` undefined: PGlite. */
export class CpuMeter {
  private readonly base = new Map<number, number>();
  private readonly last = new Map<number, { role: PgRole; ms: number }>();
  /** The service processes' last readings (a killed one keeps its last). */
  private readonly service = new Map<number, { ms: number; pglite: number }>();
  private serviceBase = { ms: 0, pglite: 0 };

  constructor(
    private readonly servicePids: number[],
    private readonly database: string | undefined,
    private readonly exclude: Set<number>,
  ) {
    this.reset();
  }

  /** The service processes' CPU, and their PGlite threads' (none on PostgreSQL). */
  private serviceMs() {
    const sum = { ms: 0, pglite: 0 };
    for (const pid of this.servicePids) {
      const ms = processCpuMs(pid);
      if (ms !== undefined)
        this.service.set(pid, {
          ms,
          pglite: this.database === undefined ? (threadCpu(pid).get('pglite') ?? 0) : 0,
        });
      sum.ms += this.service.get(pid)?.ms ?? 0;
      sum.pglite += this.service.get(pid)?.pglite ?? 0;
    }
    return sum;
  }

  /** Starts counting from now. */
  reset(): void {
    this.base.clear();
    this.last.clear();
    this.serviceBase = this.serviceMs();
    if (this.database === undefined) return;
    for (const p of postgresProcesses(this.database, this.exclude)) {
      this.base.set(p.pid, p.ms);
      this.last.set(p.pid, p);
    }
  }

  /** Reads everything now; the CPU used since `reset()`. */
  poll(): CpuReading {
    if (this.database !== undefined)
      for (const p of postgresProcesses(this.database, this.exclude)) {
        if (!this.base.has(p.pid)) this.base.set(p.pid, 0);
        this.last.set(p.pid, p);
      }
    const pg = { ours: 0, shared: 0, other: 0 };
    for (const [pid, p] of this.last) pg[p.role] += p.ms - (this.base.get(pid) ?? 0);
    const service = this.serviceMs();
    return {
      t: performance.now(),
      service: service.ms - this.serviceBase.ms,
      pglite: service.pglite - this.serviceBase.pglite,
      pgOurs: pg.ours,
      pgShared: pg.shared,
    };
  }
}
