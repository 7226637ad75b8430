// The bench's PostgreSQL side: its own database (made afresh, so nothing collides with the test
// suite's), what the server says about it while the mix runs (connections by state from
// pg_stat_activity; transactions committed from pg_stat_database, as deltas), and, after a run, the
// check that every acknowledged write is there.
import pg from 'pg';

export interface PgSample {
  t: number;
  xactCommit: number;
  xactRollback: number;
  connections: number;
  active: number;
  idleInTransaction: number;
}

/** Drops and creates `database` on the server of `adminUrl`. */
export async function freshDatabase(adminUrl: string, database: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`drop database if exists ${database} with (force)`);
    await c.query(`create database ${database}`);
  } finally {
    await c.end();
  }
}

export async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`drop database if exists ${database} with (force)`);
  } finally {
    await c.end();
  }
}

/** Samples the database's activity on a connection of its own (counted among the connections:
 * one is the sampler). */
export async function pgSampler(url: string, database: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const pid = await c.query<{ pid: number }>('select pg_backend_pid() pid');
  return {
    /** The sampler's own backend (not the service's work). */
    backendPid: pid.rows[0]!.pid,
    async sample(): Promise<PgSample> {
      // One after the other: a pg client runs one query at a time (queuing a second is deprecated).
      const db = await c.query<{ xact_commit: string; xact_rollback: string }>(
        'select xact_commit, xact_rollback from pg_stat_database where datname = $1',
        [database],
      );
      const act = await c.query<{ state: string | null; n: string }>(
        `select state, count(*) n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()
         group by state`,
        [database],
      );
      const by = (s: string) => Number(act.rows.find((r) => r.state === s)?.n ?? 0);
      return {
        t: Date.now(),
        xactCommit: Number(db.rows[0]?.xact_commit ?? 0),
        xactRollback: Number(db.rows[0]?.xact_rollback ?? 0),
        connections: act.rows.reduce((n, r) => n + Number(r.n), 0),
        active: by('active'),
        idleInTransaction: by('idle in transaction'),
      };
    },
    /** Rows of `ids` that `table` lacks (the acknowledged writes lost). */
    async missing(table: 'memories' | 'timeline_events', ids: number[]): Promise<number[]> {
      if (ids.length === 0) return [];
      const { rows } = await c.query<{ id: string }>(
        `select x.id from unnest($1::int8[]) x(id) where not exists (select 1 from ${table} t where t.id = x.id)`,
        [ids],
      );
      return rows.map((r) => Number(r.id));
    },
    /** For each idempotency key: whether the ledger holds it, and more than once (applied twice). */
    async ledger(keys: string[]): Promise<{ missing: number; duplicated: number }> {
      if (keys.length === 0) return { missing: 0, duplicated: 0 };
      const { rows } = await c.query<{ k: string; n: string }>(
        `select k, (select count(*) from economy_ledger l where l.idempotency_key = k) n
         from unnest($1::text[]) k`,
        [keys],
      );
      return {
        missing: rows.filter((r) => Number(r.n) === 0).length,
        duplicated: rows.filter((r) => Number(r.n) > 1).length,
      };
    },
    /** The webhook deliveries by status (pending ones may still arrive). */
    async deliveries(): Promise<Record<string, number>> {
      const { rows } = await c.query<{ status: string; n: string }>(
        'select status, count(*) n from webhook_deliveries group by status',
      );
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
    /** The scheduled tasks' runs as the timeline recorded them (diary_compliance_checked). */
    async scheduledRuns(): Promise<number> {
      const { rows } = await c.query<{ n: string }>(
        "select count(*) n from timeline_events where event_type = 'diary_compliance_checked'",
      );
      return Number(rows[0]?.n ?? 0);
    },
    close: () => c.end(),
  };
}
export type PgSampler = Awaited<ReturnType<typeof pgSampler>>;
