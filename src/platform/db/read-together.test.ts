// Reads asked side by side (before the pending microtasks run) run as one statement, each caller getting its own
// value; a failed read fails only its caller; a transaction's reads run at once, by themselves.
// On PGlite, and on PostgreSQL when DATABASE_URL is set.
import { sql, type KyselyPlugin } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { transaction, type Db } from './database.js';
import { readTogether } from './read-together.js';

let t: TestApp;
let db: Db;
let statements = 0;
/** Counts the statements answered through `db` (Kysely's public plugin hook, called once per
 * executed statement; its query hook also sees each subquery built). */
const counter: KyselyPlugin = {
  transformQuery: (args) => args.node,
  transformResult: async (args) => {
    statements++;
    return args.result;
  },
};

beforeAll(async () => {
  t = await createTestApp();
  db = t.deps.db.withPlugin(counter);
});
afterAll(() => t.close());

const number = (n: number) => sql<number>`(select ${n}::int)`;

describe('readTogether', () => {
  it('selects the reads asked together in one statement, each caller its own value', async () => {
    statements = 0;
    const [a, b, c] = await Promise.all([
      readTogether(db, number(1)),
      readTogether(db, jsonArrayFrom(db.selectNoFrom((eb) => eb.val('two').as('v')))),
      readTogether(db, jsonObjectFrom(db.selectFrom('users').select('role').orderBy('id').limit(1))),
    ]);
    expect(statements).toBe(1);
    expect(a).toBe(1);
    expect(b).toEqual([{ v: 'two' }]);
    expect(c).toEqual({ role: expect.any(String) });
  });

  it('a read asked after an await runs in a statement of its own', async () => {
    statements = 0;
    expect(await readTogether(db, number(3))).toBe(3);
    expect(await readTogether(db, number(4))).toBe(4);
    expect(statements).toBe(2);
  });

  it('a failed read fails its caller alone; the others still answer', async () => {
    statements = 0;
    const [ok, bad, alsoOk] = await Promise.allSettled([
      readTogether(db, number(5)),
      readTogether(db, sql<number>`(select 'not a number'::int)`),
      readTogether(db, number(6)),
    ]);
    expect(ok).toEqual({ status: 'fulfilled', value: 5 });
    expect(bad.status).toBe('rejected');
    expect(String((bad as PromiseRejectedResult).reason)).toMatch(/invalid input syntax/);
    expect(alsoOk).toEqual({ status: 'fulfilled', value: 6 });
    // The combined statement failed, then each read ran by itself: the two good ones answered.
    expect(statements).toBe(2);
  });

  it("a transaction's read runs at once in it and sees its writes", async () => {
    const seen = await transaction(db, async ({ trx }) => {
      await sql`create temporary table together_probe (x int) on commit drop`.execute(trx);
      await sql`insert into together_probe values (7)`.execute(trx);
      return readTogether(trx, sql<number>`(select x from together_probe)`);
    });
    expect(seen).toBe(7);
  });
});
