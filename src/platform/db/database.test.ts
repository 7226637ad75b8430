// The database layer's promises, on whichever lane runs: transactions stay correct under
// concurrency, a statement outside the open transaction fails instead of hanging (PGlite), and
// a slow query does not stall the event loop.
import { sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, isPostgres, type TestApp } from '../../../test/harness.js';
import {
  openDatabase,
  reserved,
  together,
  transaction,
  DatabaseBusyError,
  StatementAfterEndError,
} from './database.js';
import { listMigrations, migrate } from './migrate.js';

let t: TestApp;
beforeAll(async () => {
  // Generous: 50 transactions queue for PGlite's one connection, on a machine that may be busy.
  t = await createTestApp({ DB_POOL_TIMEOUT_MS: '3000' });
  await sql`create table counter_test (id int primary key, value int not null)`.execute(t.deps.db);
  await sql`insert into counter_test values (1, 0)`.execute(t.deps.db);
});
afterAll(() => t.close());

const counterValue = async () =>
  (await sql<{ value: number }>`select value from counter_test where id = 1`.execute(t.deps.db)).rows[0]!
    .value;

/** Watches the connections the pool hands out: what reaches the last one and what it answers, in
 * order, and its socket's writes (a system call each). */
function watchConnections() {
  const clients: pg.PoolClient[] = [];
  const acquired = (c: pg.PoolClient) => clients.push(c);
  t.deps.database.pool.on('acquire', acquired);
  const log: string[] = [];
  let writes = 0;
  const undo: (() => void)[] = [() => t.deps.database.pool.off('acquire', acquired)];
  return {
    log,
    writes: () => writes,
    /** 'I' idle, 'T' in a transaction, as the connection knows it from the answers so far. */
    status: () =>
      (clients.at(-1) as unknown as { getTransactionStatus(): string | null }).getTransactionStatus(),
    /** From now on, on the connection handed out last; `sent` hears each statement sent. */
    watch(sent?: (text: string) => void) {
      const client = clients.at(-1)! as unknown as { query: (...args: unknown[]) => unknown };
      const query = client.query;
      client.query = (...args: unknown[]) => {
        const text = String(args[0]);
        log.push(`sent ${text}`);
        const r = query.apply(client, args) as Promise<unknown>;
        sent?.(text);
        void r.then(
          () => log.push(`answered ${text}`),
          () => log.push(`failed ${text}`),
        );
        return r;
      };
      undo.push(() => (client.query = query));
      // The socket the pool's client made and handed to pg (service-client.ts `ServiceClient`).
      const stream = (client as unknown as { socket: Record<string, unknown> }).socket;
      for (const k of ['_write', '_writev']) {
        const f = stream[k] as (...a: unknown[]) => unknown;
        stream[k] = (...a: unknown[]) => (writes++, f.apply(stream, a));
        undo.push(() => (stream[k] = f));
      }
    },
    restore: () => undo.splice(0).forEach((u) => u()),
  };
}

describe('database layer', () => {
  it('applies every migration and reports the database kind', async () => {
    const rows = await t.deps.db.selectFrom('schema_migrations').select('name').execute();
    expect(rows.map((r) => r.name)).toEqual(
      listMigrations(t.deps.database.capabilities.vector).map((m) => m.name),
    );
    expect(t.deps.database.kind).toBe(isPostgres() ? 'postgres' : 'pglite');
  });

  it('keeps rate-limit windows in an unlogged table (a hit commits without a WAL flush)', async () => {
    const r = await sql<{ relpersistence: string }>`
      select relpersistence from pg_class where oid = 'rate_limit_counters'::regclass`.execute(t.deps.db);
    expect(r.rows).toEqual([{ relpersistence: 'u' }]);
  });

  it('keeps the vector variant it was migrated with when migrated again with pgvector off', async () => {
    const before = t.deps.database.capabilities.vector;
    // PGlite ships pgvector, so its database was made with it; this PostgreSQL has none.
    expect(before).toBe(!isPostgres());
    await migrate(t.deps.database, { pgvector: false });
    expect(t.deps.database.capabilities.vector).toBe(before);
  });

  it('loses no update when 50 read-modify-write transactions hit one row at once', async () => {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        transaction(t.deps.db, async ({ trx }) => {
          const row = await trx
            .selectFrom('counter_test' as never)
            .select(sql<number>`value`.as('value'))
            .where(sql`id`, '=', 1)
            .forUpdate()
            .executeTakeFirstOrThrow();
          // Yield to the event loop between read and write so that interleaving would show if the
          // lock did not hold.
          await new Promise((r) => setImmediate(r));
          await sql`update counter_test set value = ${row.value + 1} where id = 1`.execute(trx);
        }),
      ),
    );
    expect(await counterValue()).toBe(50);
  });

  it('runs after-commit callbacks only for committed transactions', async () => {
    const seen: string[] = [];
    await transaction(t.deps.db, async (uow) => uow.afterCommit(() => seen.push('committed')));
    await expect(
      transaction(t.deps.db, async (uow) => {
        uow.afterCommit(() => seen.push('rolled back'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(seen).toEqual(['committed']);
  });

  it('fails loudly (pool timeout) on a statement issued outside the open transaction', async () => {
    // PGlite always has one connection; on Postgres, open a one-connection pool to the same schema.
    const single = isPostgres()
      ? await openDatabase({
          url: t.databaseUrl,
          dataDir: '',
          poolSize: 1,
          poolTimeoutMs: 3000,
          schema: t.deps.database.schema,
        })
      : t.deps.database;
    const db = single.db;
    const outcome = await transaction(db, async ({ trx }) => {
      await sql`select 1`.execute(trx);
      // Wrong: uses the database instead of trx while trx holds the only connection.
      return sql`select 2`.execute(db).then(
        () => 'ran',
        (err: unknown) => err,
      );
    });
    // It failed (it did not hang, and did not run on a second connection) with the pool's own
    // timeout, named as a busy database and telling the timeout it waited for.
    expect(outcome).toBeInstanceOf(DatabaseBusyError);
    expect((outcome as DatabaseBusyError).message).toContain('within 3000 ms');
    expect((outcome as DatabaseBusyError).cause).toBeInstanceOf(Error);
    expect(((outcome as DatabaseBusyError).cause as Error).message).toMatch(/timeout/i);
    // The database is still usable afterwards.
    await expect(sql`select 3 as n`.execute(db)).resolves.toMatchObject({ rows: [{ n: 3 }] });
    if (single !== t.deps.database) await single.close();
  });

  it('prepares parameterised statements once per connection, but not list-shaped ones', async () => {
    const names = await transaction(t.deps.db, async ({ trx }) => {
      for (let i = 0; i < 3; i++) {
        const r = await sql<{ n: number }>`select ${i}::int + 40 as n /* prepared-probe */`.execute(trx);
        expect(r.rows[0]!.n).toBe(i + 40);
      }
      const listed = await sql<{ n: number }>`select count(*)::int as n from (values (1), (2)) v(x)
        where x in (${1}, ${2}) /* list-probe */`.execute(trx);
      expect(listed.rows[0]!.n).toBe(2);
      const rows = await sql<{
        n: number;
      }>`select count(*)::int as n from (values (${1}::int), (${2}::int)) v(x)
        /* rows-probe */`.execute(trx);
      expect(rows.rows[0]!.n).toBe(2);
      // Same connection (the transaction's): what this session holds prepared.
      const r = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(trx);
      return r.rows.map((row) => row.statement);
    });
    expect(names.filter((s) => s.includes('prepared-probe'))).toHaveLength(1);
    expect(names.filter((s) => s.includes('list-probe') || s.includes('rows-probe'))).toHaveLength(0);
  });

  it('plans every prepared statement for its parameters, on every connection, set before its first use', async () => {
    // As many connections as the pool holds at once: each is set up before its first statement.
    const modes = await Promise.all(
      Array.from({ length: 4 }, () =>
        transaction(t.deps.db, async ({ trx }) => {
          const r = await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(trx);
          return r.rows[0]!.plan_cache_mode;
        }),
      ),
    );
    expect(modes).toEqual(Array(4).fill('force_custom_plan'));
  });

  it("sends a transaction's begin with its first statement, and its independent statements together", async () => {
    const w = watchConnections();
    try {
      const seen = await transaction(t.deps.db, async ({ trx }) => {
        // At the transaction's start the begin is on the wire, not answered.
        const atStart = w.status();
        w.watch();
        // Two statements made at once on the transaction's connection: the second goes out before
        // the first is answered (one round trip for both, pg's pipeline mode), in the same write
        // as the first and the held `begin`; both are answered.
        const [a, b] = await together([
          sql<{ n: number }>`select 1 as n`.execute(trx),
          sql<{ n: number }>`select 2 as n`.execute(trx),
        ]);
        return { atStart, after: w.status(), a: a.rows, b: b.rows, writes: w.writes() };
      });
      expect(seen).toEqual({ atStart: 'I', after: 'T', a: [{ n: 1 }], b: [{ n: 2 }], writes: 1 });
      // Both out before either answer (the first's answer waits on the begin's too, so the two
      // may settle in either order).
      expect(w.log.slice(0, 2)).toEqual(['sent select 1 as n', 'sent select 2 as n']);
      expect(w.log.slice(2, 4).sort()).toEqual(['answered select 1 as n', 'answered select 2 as n']);
      expect(w.log.slice(4)).toEqual(['sent commit', 'answered commit']);
      w.restore();
      // A failing statement among them still rolls the whole transaction back.
      const before = await counterValue();
      await expect(
        transaction(t.deps.db, async ({ trx }) =>
          together([
            sql`update counter_test set value = -1 where id = 1`.execute(trx),
            sql`select 1 / 0`.execute(trx),
          ]),
        ),
      ).rejects.toThrow(/division by zero/);
      expect(await counterValue()).toBe(before);
    } finally {
      w.restore();
    }
  });

  it('a reserved connection sends statements made together in one write; one made after it is refused', async () => {
    const w = watchConnections();
    let conn!: Parameters<Parameters<typeof reserved>[1]>[0];
    try {
      const seen = await reserved(t.deps.db, async (c) => {
        conn = c;
        w.watch();
        const [a, b] = await together([
          sql<{ n: number }>`select 1 as n`.execute(c),
          sql<{ n: number }>`select 2 as n`.execute(c),
        ]);
        return { a: a.rows, b: b.rows, writes: w.writes(), transaction: c.isTransaction };
      });
      expect(seen).toEqual({ a: [{ n: 1 }], b: [{ n: 2 }], writes: 1, transaction: false });
      expect(w.log.slice(0, 2)).toEqual(['sent select 1 as n', 'sent select 2 as n']);
    } finally {
      w.restore();
    }
    // Its connection went back to the pool: a statement still holding it would run on another's.
    await expect(sql`select 3`.execute(conn)).rejects.toBeInstanceOf(StatementAfterEndError);
  });

  it("refuses a statement made after its transaction's commit went out (never runs it on its own)", async () => {
    const w = watchConnections();
    const before = await counterValue();
    let late: Promise<unknown> | undefined;
    try {
      await transaction(t.deps.db, async ({ trx }) => {
        await sql`select 1`.execute(trx);
        // A statement made as soon as the commit is on its way, before it is answered (a promise
        // left running when the callback returned; Kysely itself refuses one only once the
        // commit is answered).
        w.watch((text) => {
          if (text !== 'commit') return;
          late = sql`update counter_test set value = -5 where id = 1`.execute(trx);
          late.catch(() => undefined); // awaited below, once the transaction is over
        });
      });
    } finally {
      w.restore();
    }
    await expect(late).rejects.toBeInstanceOf(StatementAfterEndError);
    expect(await counterValue()).toBe(before);
    // The connection serves the next transaction as usual.
    expect(
      await transaction(t.deps.db, async ({ trx }) => (await sql`select 3 as n`.execute(trx)).rows),
    ).toEqual([{ n: 3 }]);
  });

  it('lets no statement of a transaction run after its rollback when they were sent together', async () => {
    // One statement fails; the other branch, having waited for that failure and then for a turn
    // of the event loop, writes. With Promise.all the transaction would roll back at once, the
    // write would go out behind the rollback and commit on its own.
    const before = await counterValue();
    await expect(
      transaction(t.deps.db, async ({ trx }) => {
        const failing = sql`select 1 / 0`.execute(trx);
        const later = failing
          .catch(() => new Promise((r) => setImmediate(r)))
          .then(() => sql`update counter_test set value = -7 where id = 1`.execute(trx));
        return together([failing, later]);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await counterValue()).toBe(before);
  });

  it('keeps the event loop responsive while a long query runs', async () => {
    // Ordering, not timing: health checks (HTTP round trips through this process's event loop)
    // are answered while the query still holds the database. A query run on the event loop's
    // thread (PGlite without its worker) would block them all until it finished: none answered
    // while it runs, however long it lasts. The query cannot be ended early (PGlite serves one
    // session), so when a busy machine answers the checks slower than it lasts, it runs again,
    // longer: the claim never rests on how fast five round trips are.
    const answeredWhile = async (seconds: number): Promise<boolean[]> => {
      let slowDone = false;
      let sent!: () => void;
      const querySent = new Promise<void>((resolve) => (sent = resolve));
      const slow = t.deps.db
        .connection()
        .execute(async (conn) => {
          // The connection is ours: the query goes out before anything else this test does.
          const running = sql`select pg_sleep(${seconds})`.execute(conn);
          sent();
          return running;
        })
        .then(() => (slowDone = true));
      await querySent;
      const answered: boolean[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await t.api('GET', '/api/health');
        expect(res.status).toBe(200);
        answered.push(!slowDone);
      }
      await slow;
      return answered;
    };
    let answeredWhileRunning: boolean[] = [];
    for (const seconds of [1, 4, 16]) {
      answeredWhileRunning = await answeredWhile(seconds);
      if (!answeredWhileRunning.includes(false)) break;
    }
    expect(answeredWhileRunning).toEqual([true, true, true, true, true]);
  });
});
