// Numbered, forward-only SQL migrations from ./migrations, applied in name order inside one
// transaction under an advisory lock, so two nodes starting together never apply one twice.
//
// A migration that needs the vector type comes as a pair: `NNNN_name.vector.sql` (pgvector
// present) and `NNNN_name.novector.sql` (exact scan over real[]); the runner applies the one that
// fits and records the migration once as `NNNN_name`. The choice is made here, once.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { DatabaseHandle } from './database.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const LOCK_KEY = 74_201_511; // arbitrary constant shared by every node of this service

interface MigrationFile {
  name: string;
  file: string;
}

export function listMigrations(vector: boolean): MigrationFile[] {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) =>
    /^\d{4}_[a-z0-9_]+(\.vector|\.novector)?\.sql$/.test(f),
  );
  const byName = new Map<string, MigrationFile>();
  for (const file of files.sort()) {
    const variant = /\.(vector|novector)\.sql$/.exec(file)?.[1];
    const name = file.replace(/(\.vector|\.novector)?\.sql$/, '');
    if (variant === 'vector' && !vector) continue;
    if (variant === 'novector' && vector) continue;
    byName.set(name, { name, file });
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Detects pgvector (installing it when the server offers it, unless `pgvector` is false: the
 * sketch fallback then runs even where pgvector exists) and applies pending migrations. The
 * choice holds for the database's life (the variants' migrations differ): a database already
 * migrated keeps the variant its tables were made with, whatever the option or the extension say
 * now. */
export async function migrate(
  handle: DatabaseHandle,
  opts: {
    pgvector?: boolean;
    /** Stop after this migration (tests of a migration's conversion of existing rows). */
    until?: string;
  } = {},
): Promise<{ applied: string[] }> {
  const { db } = handle;
  const made = await sql<{ migrated: boolean; sketch: boolean; tracked: boolean }>`
    select to_regclass('memory_embeddings') is not null as migrated,
      exists (select 1 from pg_attribute where attrelid = to_regclass('memory_embeddings')
              and attname = 'sketch' and not attisdropped) as sketch,
      to_regclass('schema_migrations') is not null as tracked`.execute(db);
  const existing = made.rows[0];
  handle.capabilities.vector = existing?.migrated
    ? !existing.sketch
    : (opts.pgvector ?? true) && (await installPgvector(db));
  const wanted = listMigrations(handle.capabilities.vector).filter(
    (m) => opts.until === undefined || m.name <= opts.until,
  );
  // A start on a database migrated already (every start but the first): the names applied, read
  // once, and no lock or transaction. Migrations are never undone, so none can become pending
  // behind that read; one pending takes the locked path below, which reads again under the lock.
  if (existing?.tracked) {
    const done = await db.selectFrom('schema_migrations').select('name').execute();
    const names = new Set(done.map((r) => r.name));
    if (wanted.every((m) => names.has(m.name))) return { applied: [] };
  }

  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_KEY})`.execute(trx);
    await sql`create table if not exists schema_migrations (
      name text primary key,
      applied_at timestamptz not null default now()
    )`.execute(trx);
    const done = new Set(
      (await trx.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name),
    );
    const applied: string[] = [];
    for (const m of wanted) {
      if (done.has(m.name)) continue;
      const text = readFileSync(MIGRATIONS_DIR + m.file, 'utf8');
      await sql.raw(text).execute(trx);
      await trx.insertInto('schema_migrations').values({ name: m.name }).execute();
      applied.push(m.name);
    }
    return { applied };
  });
}

/** Installs pgvector when the server offers it; whether its type exists now. */
async function installPgvector(db: DatabaseHandle['db']): Promise<boolean> {
  const available = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_available_extensions where name = 'vector'`.execute(db);
  if ((available.rows[0]?.n ?? 0) > 0) {
    try {
      await sql`create extension if not exists vector`.execute(db);
    } catch {
      // Offered but not installable by this role: run on the exact-scan fallback.
    }
  }
  const installed = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_type where typname = 'vector'`.execute(db);
  return (installed.rows[0]?.n ?? 0) > 0;
}

export async function migrationStatus(
  handle: DatabaseHandle,
): Promise<{ applied: number; pending: number; latest: string | null }> {
  const all = listMigrations(handle.capabilities.vector);
  const rows = await handle.db.selectFrom('schema_migrations').select('name').orderBy('name').execute();
  const done = new Set(rows.map((r) => r.name));
  return {
    applied: rows.length,
    pending: all.filter((m) => !done.has(m.name)).length,
    latest: rows.at(-1)?.name ?? null,
  };
}
