// A PostgreSQL schema of a test or benchmark run, dropped with the job queue's schema beside it
// (`<schema>_boss`, src/platform/jobs/queue.ts).
import pg from 'pg';

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `drop schema if exists "${schema}" cascade; drop schema if exists "${schema}_boss" cascade`,
    );
  } finally {
    await client.end();
  }
}
