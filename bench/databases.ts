// The databases a bench runs on, in turn: PGlite on a temporary data directory, then, when
// DATABASE_URL is set, PostgreSQL in a schema of the bench's own (dropped afterwards); `only`
// ('pglite' or 'postgres') keeps one of them.
import { randomBytes } from 'node:crypto';
import { dropSchema } from '../test/schema.js';
import { embeddedDataDir } from './embedded-dir.js';

export type BenchDatabase = 'pglite' | 'postgres';

export async function onEachDatabase<T>(
  schemaPrefix: string,
  only: string | undefined,
  run: (db: BenchDatabase, env: Record<string, string | undefined>) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  if (only !== 'postgres') results.push(await run('pglite', embeddedDataDir()));
  const url = process.env.DATABASE_URL;
  if (url && only !== 'pglite') {
    const schema = `${schemaPrefix}_${randomBytes(4).toString('hex')}`;
    try {
      results.push(await run('postgres', { DATABASE_URL: url, DB_SCHEMA: schema }));
    } finally {
      await dropSchema(url, schema);
    }
  }
  return results;
}
