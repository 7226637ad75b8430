// Every row of one database carried to another (`cli export` / `cli import`): the embedded
// database to PostgreSQL and back, or between two servers. The file is JSON lines: a header (the
// migrations applied, whether the embeddings are pgvector's), then each table (parents before the
// tables whose foreign keys name them) as a line naming it and its columns followed by a line per
// row (the row as PostgreSQL's own `to_jsonb` text, never parsed here, so a bigint or a float keeps
// every digit), then the sequences' positions. Not carried: the migrations' own record (the target
// migrates itself) and the running nodes' liveness rows (service_nodes: processes, not data). The export reads one snapshot (repeatable read).
// The import migrates the target, refuses one that holds any row, inserts each table's rows in
// batches (identity values kept), then sets every sequence where the source's stood.
//
// The embedding tables differ between a database with pgvector and one without (vector columns
// against sketches and float32 bytes). Between two of the same kind they are carried like any
// other; across kinds they are left out and every memory chunk is queued to be embedded again,
// which the service does in the background once it runs (the memories, their text and their
// metadata are all carried).
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { sql, type Db } from './database.js';
import type { DatabaseHandle } from './database.js';

export const EXPORT_FORMAT = 'assistant-platform-export';
const BATCH = 500;
/** Tables whose layout depends on pgvector (memory_embed_queue, the same in both, is not one). */
const vectorLayout = (table: string) => /^memory_(embeddings|embedding_|scan|sketch)/.test(table);

interface Header {
  format: typeof EXPORT_FORMAT;
  version: 1;
  vector: boolean;
  migrations: string[];
  exportedAt: string;
}

export interface TransferCounts {
  tables: Record<string, number>;
  sequences: number;
  /** Import only: tables left out because the two databases' embeddings differ in kind. */
  skipped?: string[];
  /** Import only: memory chunks queued to be embedded again (embeddings of another kind). */
  requeued?: number;
}

/** The tables of the current schema (not partitions; not the migrations' record or the nodes'
 * liveness), parents first, and each one's columns
 * that take a value (generated ones are computed again). */
async function tablesInOrder(db: Db): Promise<{ name: string; columns: string[] }[]> {
  const tables = (
    await sql<{ name: string }>`select c.relname as name from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
        and c.relname not in ('schema_migrations', 'service_nodes') order by c.relname`.execute(db)
  ).rows.map((r) => r.name);
  const edges = (
    await sql<{ child: string; parent: string }>`select ch.relname as child, pa.relname as parent
      from pg_constraint k join pg_class ch on ch.oid = k.conrelid join pg_class pa on pa.oid = k.confrelid
      where k.contype = 'f' and k.connamespace = current_schema()::regnamespace`.execute(db)
  ).rows;
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (t: string) => {
    if (ordered.includes(t) || visiting.has(t)) return;
    visiting.add(t);
    for (const e of edges) if (e.child === t && e.parent !== t) visit(e.parent);
    ordered.push(t);
  };
  for (const t of tables) visit(t);
  const cols = (
    await sql<{ table: string; column: string }>`select table_name as table, column_name as column
      from information_schema.columns where table_schema = current_schema() and is_generated = 'NEVER'
      order by table_name, ordinal_position`.execute(db)
  ).rows;
  return ordered.map((name) => ({
    name,
    columns: cols.filter((c) => c.table === name).map((c) => c.column),
  }));
}

async function appliedMigrations(db: Db): Promise<string[]> {
  const r = await sql<{ name: string }>`select name from schema_migrations order by name`.execute(db);
  return r.rows.map((x) => x.name);
}

const ident = (name: string) => sql.id(name);

async function write(out: WriteStream, line: string): Promise<void> {
  if (!out.write(line + '\n')) await once(out, 'drain');
}

/** Writes every row of the handle's (migrated) database to `file`. */
export async function exportDatabase(handle: DatabaseHandle, file: string): Promise<TransferCounts> {
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  await once(out, 'open');
  const counts: TransferCounts = { tables: {}, sequences: 0 };
  try {
    await handle.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const header: Header = {
          format: EXPORT_FORMAT,
          version: 1,
          vector: handle.capabilities.vector,
          migrations: await appliedMigrations(trx),
          exportedAt: new Date().toISOString(),
        };
        await write(out, JSON.stringify(header));
        for (const { name, columns } of await tablesInOrder(trx)) {
          await write(out, JSON.stringify({ table: name, columns }));
          let n = 0;
          for (let offset = 0; ; offset += BATCH) {
            const { rows } = await sql<{ r: string }>`select to_jsonb(t)::text as r from ${ident(name)} t
              order by ctid limit ${BATCH} offset ${offset}`.execute(trx);
            for (const row of rows) await write(out, row.r);
            n += rows.length;
            if (rows.length < BATCH) break;
          }
          counts.tables[name] = n;
        }
        const seqs = (
          await sql<{ name: string; value: string }>`select sequencename as name, last_value::text as value
            from pg_sequences where schemaname = current_schema() and last_value is not null
            order by sequencename`.execute(trx)
        ).rows;
        await write(out, JSON.stringify({ sequences: seqs }));
        counts.sequences = seqs.length;
      });
  } finally {
    out.end();
    await once(out, 'close');
  }
  return counts;
}

export class TransferError extends Error {}

/** Reads `file` (an export) into the handle's database, which must be migrated and hold no row. */
export async function importDatabase(handle: DatabaseHandle, file: string): Promise<TransferCounts> {
  const { db } = handle;
  const target = await tablesInOrder(db);
  for (const { name } of target) {
    const r = await sql<{ any: boolean }>`select exists (select from ${ident(name)}) as any`.execute(db);
    if (r.rows[0]!.any)
      throw new TransferError(
        `the target database is not empty (table ${name} has rows): import into a new DATA_DIR, or an empty PostgreSQL database or DB_SCHEMA`,
      );
  }
  const counts: TransferCounts = { tables: {}, sequences: 0, skipped: [] };
  let header: Header | undefined;
  let table: { name: string; columns: string[]; skip: boolean } | undefined;
  let batch: string[] = [];
  let done = false;

  await db.transaction().execute(async (trx) => {
    const flush = async () => {
      if (!table || batch.length === 0) return;
      const cols = sql.join(table.columns.map(ident));
      await sql`insert into ${ident(table.name)} (${cols}) overriding system value
        select ${cols} from jsonb_populate_recordset(null::${ident(table.name)}, ${'[' + batch.join(',') + ']'}::jsonb)`.execute(
        trx,
      );
      counts.tables[table.name] = (counts.tables[table.name] ?? 0) + batch.length;
      batch = [];
    };
    // Made just before it is iterated: readline emits the lines of what it has read whether or not
    // anyone listens, and its iterator buffers only from when it starts, so lines read while the
    // transaction began would be lost.
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line) continue;
      if (!header) {
        header = parseHeader(line);
        const mine = await appliedMigrations(trx);
        if (header.migrations.at(-1) !== mine.at(-1))
          throw new TransferError(
            `the export was made at another migration (${header.migrations.at(-1)}) than this database (${mine.at(-1)}): run both on the same version of the service`,
          );
        continue;
      }
      if (line.startsWith('{"table"')) {
        await flush();
        const t = JSON.parse(line) as { table: string; columns: string[] };
        const here = target.find((x) => x.name === t.table);
        const same = here !== undefined && here.columns.join() === t.columns.join();
        const skip = !same && header.vector !== handle.capabilities.vector && vectorLayout(t.table);
        if (!same && !skip)
          throw new TransferError(`table ${t.table} differs between the export and this database`);
        if (skip) counts.skipped!.push(t.table);
        table = { name: t.table, columns: t.columns, skip };
        if (!skip) counts.tables[t.table] = 0;
        continue;
      }
      if (line.startsWith('{"sequences"')) {
        await flush();
        table = undefined;
        const { sequences } = JSON.parse(line) as { sequences: { name: string; value: string }[] };
        for (const s of sequences)
          await sql`select setval(${s.name}::text::regclass, ${s.value}::bigint)`.execute(trx);
        counts.sequences = sequences.length;
        done = true;
        continue;
      }
      if (!table) throw new TransferError('a row before any table: not an export of this service');
      if (table.skip) continue;
      batch.push(line);
      if (batch.length >= BATCH) await flush();
    }
    if (!done) throw new TransferError('the export ends early (no sequences line): it is incomplete');
    if (counts.skipped!.length) {
      const r = await sql`insert into memory_embed_queue (chunk_id) select id from memory_chunks
        on conflict do nothing`.execute(trx);
      counts.requeued = Number(r.numAffectedRows ?? 0);
    }
  });
  if (!counts.skipped!.length) delete counts.skipped;
  return counts;
}

function parseHeader(line: string): Header {
  let h: Partial<Header>;
  try {
    h = JSON.parse(line) as Partial<Header>;
  } catch {
    throw new TransferError('not an export of this service (its first line is not JSON)');
  }
  if (h.format !== EXPORT_FORMAT || h.version !== 1 || !Array.isArray(h.migrations))
    throw new TransferError(`not an export of this service (format ${String(h.format)})`);
  return h as Header;
}
