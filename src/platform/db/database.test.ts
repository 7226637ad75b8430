// The database layer's promises, on whichever lane runs: transactions stay correct under
// concurrency, a statement outside the open transaction fails instead of hanging (PGlite), and
// a slow query does not stall the event loop.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, isPostgres, type TestApp } from '../../../test/harness.js';
import { openDatabase, transaction, DatabaseBusyError } from './database.js';
import { listMigrations } from './migrate.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ DB_POOL_TIMEOUT_MS: '500' });
  await sql`create table counter_test (id int primary key, value int not null)`.execute(t.deps.db);
  await sql`insert into counter_test values (1, 0)`.execute(t.deps.db);
});
afterAll(() => t.close());

describe('database layer', () => {
  it('applies every migration and reports the database kind', async () => {
    const rows = await t.deps.db.selectFrom('schema_migrations').select('name').execute();
    expect(rows.map((r) => r.name)).toEqual(listMigrations(t.deps.database.capabilities.vector).map((m) => m.name));
    expect(t.deps.database.kind).toBe(isPostgres() ? 'postgres' : 'pglite');
  });

  it('loses no update when 50 read-modify-write transactions hit one row at once', async () => {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        transaction(t.deps.db, async (trx) => {
          const row = await trx
            .selectFrom('counter_test' as never)
            .select(sql<number>`value`.as('value'))
            .where(sql`id`, '=', 1)
            .forUpdate()
            .executeTakeFirstOrThrow();
          // Yield between read and write so interleaving would show if the lock did not hold.
          await new Promise((r) => setTimeout(r, 1));
          await sql`update counter_test set value = ${(row).value + 1} where id = 1`.execute(trx);
        }),
      ),
    );
    const r = await sql<{ value: number }>`select value from counter_test where id = 1`.execute(t.deps.db);
    expect(r.rows[0]!.value).toBe(50);
  });

  it('runs after-commit callbacks only for committed transactions', async () => {
    const seen: string[] = [];
    await transaction(t.deps.db, async (_trx, after) => after(() => seen.push('committed')));
    await expect(
      transaction(t.deps.db, async (_trx, after) => {
        after(() => seen.push('rolled back'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(seen).toEqual(['committed']);
  });

  it('fails loudly (pool timeout) on a statement issued outside the open transaction', async () => {
    // PGlite always has one connection; on Postgres, open a one-connection pool to the same schema.
    const single = isPostgres()
      ? await openDatabase({ url: process.env.DATABASE_URL, dataDir: '', poolSize: 1, poolTimeoutMs: 500, schema: t.deps.database.schema })
      : t.deps.database;
    const db = single.db;
    const started = Date.now();
    const outcome = await transaction(db, async (trx) => {
      await sql`select 1`.execute(trx);
      // Wrong: uses the database instead of trx while trx holds the only connection.
      return sql`select 2`.execute(db).then(
        () => 'ran',
        (err: unknown) => err,
      );
    });
    expect(outcome).toBeInstanceOf(DatabaseBusyError);
    expect(Date.now() - started).toBeLessThan(5000);
    // The database is still usable afterwards.
    await expect(sql`select 3 as n`.execute(db)).resolves.toMatchObject({ rows: [{ n: 3 }] });
    if (single !== t.deps.database) await single.close();
  });

  it('keeps the event loop responsive while a 200 ms query runs', async () => {
    const slow = sql`select pg_sleep(0.2)`.execute(t.deps.db);
    await new Promise((r) => setTimeout(r, 20));
    const lag = await new Promise<number>((resolve) => {
      const at = performance.now();
      setTimeout(() => resolve(performance.now() - at - 10), 10);
    });
    const before = performance.now();
    const res = await t.api('GET', '/api/health');
    const healthMs = performance.now() - before;
    const slowDone = await Promise.race([slow.then(() => true), Promise.resolve(false)]);
    await slow;
    expect(res.status).toBe(200);
    expect(slowDone).toBe(false); // the health check really ran while the query was running
    expect(lag).toBeLessThan(50);
    expect(healthMs).toBeLessThan(50);
  });
});
