// The database layer's promises, on whichever lane runs: transactions stay correct under
// concurrency, a statement outside the open transaction fails instead of hanging (PGlite), and
// a slow query does not stall the event loop.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, isPostgres, type TestApp } from '../../../test/harness.js';
import { openDatabase, together, transaction, DatabaseBusyError } from './database.js';
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

  it('rolls a transaction back when one of its statements made together fails', async () => {
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
  });

  it("refuses a statement made on a transaction once it is over (Kysely's own guard)", async () => {
    const before = await counterValue();
    let kept!: Parameters<Parameters<typeof transaction>[1]>[0]['trx'];
    await transaction(t.deps.db, async ({ trx }) => {
      kept = trx;
      await sql`select 1`.execute(trx);
    });
    await expect(sql`update counter_test set value = -5 where id = 1`.execute(kept)).rejects.toThrow(
      'Transaction is already committed',
    );
    await expect(
      transaction(t.deps.db, async ({ trx }) => {
        kept = trx;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(sql`update counter_test set value = -6 where id = 1`.execute(kept)).rejects.toThrow(
      'Transaction is already rolled back',
    );
    expect(await counterValue()).toBe(before);
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
