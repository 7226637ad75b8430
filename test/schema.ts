// The PostgreSQL side of a test or benchmark run: a schema dropped with the job queue's schema
// beside it (`<schema>_boss`, src/platform/jobs/queue.ts), and the databases the test files copy
// from one migrated template (CREATE DATABASE … TEMPLATE: a file copy, no migration run).
import pg from 'pg';

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (c) =>
    c.query(`drop schema if exists "${schema}" cascade; drop schema if exists "${schema}_boss" cascade`),
  );
}

/** `url` with its database replaced by `database`. */
export function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates `database` (from `template`, copied whole, when given) on the server at `url`. */
export async function createDatabase(url: string, database: string, template?: string): Promise<void> {
  await withClient(url, (c) =>
    c.query(`create database "${database}"${template ? ` template "${template}"` : ''}`),
  );
}

/** Drops `database`, ending any connection still open to it. */
export async function dropDatabase(url: string, database: string): Promise<void> {
  await withClient(url, (c) => c.query(`drop database if exists "${database}" with (force)`));
}
