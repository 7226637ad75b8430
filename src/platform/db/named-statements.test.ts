// Kysely's statements with parameters run prepared, once per connection: the session's
// pg_prepared_statements shows them. This fails when Kysely stops handing node-postgres text and
// values, or node-postgres stops preparing a named query, which named-statements.ts relies on.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { transaction } from './database.js';
import { statementNamer } from './named-statements.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('statementNamer', () => {
  it('names each text with parameters from its second run, the same name every time, up to its limit', () => {
    const nameOf = statementNamer(2);
    expect(nameOf('select $1', 1)).toBeUndefined();
    const a = nameOf('select $1', 1);
    expect(a).toBeDefined();
    expect(nameOf('select $1', 1)).toBe(a);
    // A text run once takes no name.
    expect(nameOf('select $1, $2, $3, $4', 4)).toBeUndefined();
    expect(nameOf('select $1, $2', 2)).toBeUndefined();
    const b = nameOf('select $1, $2', 2);
    expect(b).toBeDefined();
    expect(b).not.toBe(a);
    nameOf('select $1, $2, $3', 3);
    expect(nameOf('select $1, $2, $3', 3)).toBeUndefined();
    expect(nameOf('select $1', 1)).toBe(a);
  });

  it('leaves statements without parameters and very long texts unnamed', () => {
    const nameOf = statementNamer();
    expect(nameOf('begin', 0)).toBeUndefined();
    expect(nameOf(`select $1 ${' '.repeat(9_000)}`, 1)).toBeUndefined();
  });
});

describe('named statements on the database', () => {
  it('prepares a statement with parameters once on the connection and answers it each time', async () => {
    const probe = t.deps.db.selectNoFrom((eb) => eb.val('prepared-probe').as('v'));
    const text = probe.compile().sql;
    const seen = await transaction(t.deps.db, async ({ trx }) => {
      const first = await trx.selectNoFrom((eb) => eb.val('prepared-probe').as('v')).execute();
      const second = await trx.selectNoFrom((eb) => eb.val('prepared-probe').as('v')).execute();
      const prepared = await sql<{ statement: string }>`
        select statement from pg_prepared_statements where statement = ${text}`.execute(trx);
      const plain = await sql<{ n: number }>`
        select count(*)::int as n from pg_prepared_statements where statement ilike 'begin%'`.execute(trx);
      return { rows: [...first, ...second], prepared: prepared.rows.length, plain: plain.rows[0]!.n };
    });
    expect(seen.rows).toEqual([{ v: 'prepared-probe' }, { v: 'prepared-probe' }]);
    expect(seen.prepared).toBe(1);
    expect(seen.plain).toBe(0);
  });

  it('still runs several commands in one text without parameters', async () => {
    await sql.raw('create temporary table named_probe (x int); drop table named_probe').execute(t.deps.db);
  });

  it('keeps a prepared statement usable after a failed one on the same connection', async () => {
    await expect(
      transaction(t.deps.db, async ({ trx }) => {
        await trx.selectNoFrom((eb) => eb.val('one').as('v')).execute();
        await sql`select 1 / ${0}::int`.execute(trx);
      }),
    ).rejects.toThrow(/division by zero/);
    const again = await t.deps.db.selectNoFrom((eb) => eb.val('one').as('v')).execute();
    expect(again).toEqual([{ v: 'one' }]);
  });

  it('fails a statement whose table changed shape once, then prepares it again', async () => {
    await sql`create table named_shape (id int primary key)`.execute(t.deps.db);
    await sql`insert into named_shape values (1)`.execute(t.deps.db);
    const read = () =>
      t.deps.db
        .selectFrom('named_shape' as never)
        .selectAll()
        .where('id' as never, '=', 1 as never)
        .execute();
    // Run twice: named (prepared) from its second run.
    expect(await read()).toEqual([{ id: 1 }]);
    expect(await read()).toEqual([{ id: 1 }]);
    // As another node's migration would, between two uses of the prepared statement.
    await sql`alter table named_shape add column extra int not null default 7`.execute(t.deps.db);
    // PostgreSQL refuses the prepared statement once: its result type changed.
    await expect(read()).rejects.toMatchObject({ code: '0A000' });
    expect(await read()).toEqual([{ id: 1, extra: 7 }]);
  });
});

describe('DB_PREPARED_STATEMENTS=false', () => {
  it('sends every statement unnamed, for a pooler that cannot keep prepared statements', async () => {
    const plain = await createTestApp({ DB_PREPARED_STATEMENTS: 'false' });
    try {
      const text = plain.deps.db.selectNoFrom((eb) => eb.val('plain-probe').as('v')).compile().sql;
      const prepared = await transaction(plain.deps.db, async ({ trx }) => {
        await trx.selectNoFrom((eb) => eb.val('plain-probe').as('v')).execute();
        await trx.selectNoFrom((eb) => eb.val('plain-probe').as('v')).execute();
        return (
          await sql<{ n: number }>`
            select count(*)::int as n from pg_prepared_statements where statement = ${text}`.execute(trx)
        ).rows[0]!.n;
      });
      expect(prepared).toBe(0);
    } finally {
      await plain.close();
    }
  });
});
