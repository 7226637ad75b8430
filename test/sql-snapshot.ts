// SQL snapshots (as immich keeps its queries in checked-in .sql files): a repository function is
// run against a Kysely instance with no database behind it, and the statements it compiles are
// written out as text, so a test can compare them with a checked-in file
// (`await expect(sqlText).toMatchFileSnapshot('./sql/<name>.sql')`; `npx vitest run -u` rewrites
// the file after an intended change, and a query change shows in review).
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
} from 'kysely';
import type { Database } from '../src/platform/db/schema.js';

/** Runs `fn` against a database that answers every statement with no rows, and returns each
 * statement it compiled (SQL and parameters). A function that needs a row to go on stops there:
 * what it compiled up to that point is returned. */
export async function captureSql(fn: (db: Kysely<Database>) => unknown): Promise<CompiledQuery[]> {
  const seen: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      if (event.level === 'query') seen.push(event.query);
    },
  });
  try {
    await fn(db);
  } catch {
    // a statement answered with no rows where one was required: keep what was compiled
  }
  await db.destroy();
  return seen;
}

/** The text of a snapshot file: each named query's statements, with their parameters. */
export async function sqlSnapshot(
  queries: Record<string, (db: Kysely<Database>) => unknown>,
): Promise<string> {
  const parts: string[] = [];
  for (const [name, fn] of Object.entries(queries)) {
    const statements = await captureSql(fn);
    if (statements.length === 0) throw new Error(`${name}: no statement compiled`);
    for (const q of statements)
      parts.push(`-- ${name}\n${q.sql};\n-- parameters: ${JSON.stringify(q.parameters)}\n`);
  }
  return parts.join('\n');
}
