// The only place that knows whether PGlite or PostgreSQL is running (ARCHITECTURE.md), with
// embedded.ts, which tells them apart from the configuration.
// Everything above talks Kysely over `pg`; both engines speak the same wire protocol.
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { redactUrl } from '../redact.js';
import { isUniqueViolation } from './errors.js';
import { embeddedDir, isPostgresUrl } from './embedded.js';
import { startEmbeddedServer, type EmbeddedServer } from './pglite-server.js';
import { heldCursor, postgresCursor, type OpenCursor } from './cursor.js';
import { traced } from '../tracing.js';
import { UnitOfWork, unitOfWorkRegistry } from './unit-of-work.js';
import { namingClients, statementNamer } from './named-statements.js';

export { together } from './together.js';

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Repositories take an executor first: the database or an open transaction. */
export type Executor = Kysely<Database>;

export type DatabaseKind = 'pglite' | 'postgres';

export interface DatabaseHandle {
  kind: DatabaseKind;
  db: Db;
  /** Raw pool (one client on PGlite); for adapters such as pg-boss that speak SQL text. */
  pool: pg.Pool;
  /** The schema objects live in (search_path), when isolated; undefined means the default. */
  schema: string | undefined;
  /** Filled by migrate(): whether pgvector's `vector` type exists. */
  capabilities: { vector: boolean };
  /** Reads a long result in batches through a server-side cursor (cursor.ts: each engine's way). */
  openCursor: OpenCursor;
  close(): Promise<void>;
  /** PGlite only: write a tarball of the data directory (used for the test template). */
  dumpTo?: (path: string) => Promise<void>;
  /** PGlite on disk: its data directory (health reads its free space after a full disk). */
  dataDir?: string | undefined;
}

export interface OpenDatabaseOptions {
  /** postgres://… for a server; undefined or memory:// for embedded PGlite. */
  url: string | undefined;
  /** PGlite data directory (ignored for memory:// and servers). */
  dataDir: string;
  poolSize: number;
  poolTimeoutMs: number;
  /** Statements with parameters run prepared, once per connection (named-statements.ts);
   * default true. */
  preparedStatements?: boolean | undefined;
  /** Postgres: put every object in this schema (created if missing). Used to isolate tests. */
  schema?: string | undefined;
  /** PGlite: start from this data-directory tarball instead of an empty cluster. */
  loadFrom?: string | undefined;
  /** PGlite: connect to this running server instead of starting one (closing the database
   * leaves it running). The test harness reuses its servers this way. */
  embedded?: EmbeddedServer | undefined;
  /** PGlite: the server `startEmbedded` (embedded.ts) began for these options; the database takes
   * it over (closing the database stops it). */
  starting?: Promise<EmbeddedServer> | undefined;
  /** PGlite: where a data directory made again is said (pglite-server.ts). */
  log?: ((line: string) => void) | undefined;
}

/** Raised when no connection could be had in time: on PGlite this almost always means a
 * statement was issued outside the transaction that holds the only connection. */
export class DatabaseBusyError extends Error {
  constructor(ms: number, cause: unknown) {
    super(
      `no database connection became free within ${ms} ms (pool exhausted; on the embedded ` +
        `database this usually means a statement ran outside the open transaction instead of through it)`,
      { cause },
    );
    this.name = 'DatabaseBusyError';
  }
}

/** The PostgreSQL server at DATABASE_URL could not be reached or refused the connection; the
 * message is one line saying what to do (main.ts prints it without a stack). */
export class DatabaseUnreachableError extends Error {
  constructor(url: string, reason: string, cause: unknown) {
    super(
      `cannot reach the database at ${redactUrl(url)} (${reason}): start PostgreSQL there or correct ` +
        `DATABASE_URL (unset it to use the embedded database)`,
      { cause },
    );
    this.name = 'DatabaseUnreachableError';
  }
}

/** Why a first connection failed, in words, when it is the server's absence or refusal (not a bug
 * of ours): undefined for anything else. */
function unreachableReason(err: unknown, timeoutMs: number): string | undefined {
  const e = err as { code?: string; message?: string };
  switch (e.code ?? '') {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unknown host';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ECONNRESET':
      return 'connection reset';
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification
    case '3D000': // invalid_catalog_name: the database does not exist
      return e.message;
    default:
      return e.message && /timeout/i.test(e.message) ? `no answer within ${timeoutMs} ms` : undefined;
  }
}

// int8 → number (ids and counts stay far below 2^53), timestamps stay Date.
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v);
    if (oid === 1016)
      return (v: string) =>
        ((pg.types.getTypeParser as (oid: number) => (v: string) => unknown)(1016)(v) as string[]).map(
          Number,
        );
    return pg.types.getTypeParser(oid, format);
  },
};

function makePool(config: pg.PoolConfig, timeoutMs: number) {
  const pool = new pg.Pool({ ...config, connectionTimeoutMillis: timeoutMs, types: typeParsers });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor one lost while checked out and between statements (the server restarting, a network
  // cut): the pool listens only to its idle clients. Its next statement fails, and the pool drops
  // it when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const guarded = {
    async connect() {
      try {
        return await pool.connect();
      } catch (err) {
        if (err instanceof Error && /timeout/i.test(err.message)) throw new DatabaseBusyError(timeoutMs, err);
        throw err;
      }
    },
    end: () => pool.end(),
    options: pool.options,
  };
  return { pool, guarded };
}

/** The Kysely of a pool (the guarded one: a timeout is a busy error), its statements with
 * parameters prepared once per connection (named-statements.ts) unless `prepared` is false. */
function kyselyOn(guarded: ReturnType<typeof makePool>['guarded'], prepared = true): Db {
  const named = namingClients(statementNamer());
  const pool = prepared ? { ...guarded, connect: async () => named(await guarded.connect()) } : guarded;
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (opts.url && isPostgresUrl(opts.url)) return openPostgres(opts.url, opts);
  return openPglite(opts);
}

async function openPostgres(url: string, opts: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const schema = opts.schema;
  // One connection first: a server that is down or refuses us is reported now, in one line,
  // before anything else starts.
  const first = new pg.Client({ connectionString: url, connectionTimeoutMillis: opts.poolTimeoutMs });
  try {
    await first.connect();
  } catch (err) {
    await first.end().catch(() => undefined);
    const reason = unreachableReason(err, opts.poolTimeoutMs);
    if (reason) throw new DatabaseUnreachableError(url, reason, err);
    throw err;
  }
  try {
    if (schema) await first.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } catch (err) {
    // Two nodes creating it at once: IF NOT EXISTS does not cover the race, and the loser's
    // unique violation means the schema now exists, which is all that was asked.
    if (!isUniqueViolation(err)) throw err;
  } finally {
    await first.end();
  }
  const { pool, guarded } = makePool(
    {
      connectionString: url,
      max: opts.poolSize,
      ...(schema ? { options: `-c search_path="${schema}",public` } : {}),
    },
    opts.poolTimeoutMs,
  );
  const db = kyselyOn(guarded, opts.preparedStatements);
  return {
    kind: 'postgres',
    db,
    pool,
    schema,
    capabilities: { vector: false },
    openCursor: postgresCursor(guarded),
    close: () => db.destroy(),
  };
}

async function openPglite(opts: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const dataDir = opts.embedded ? undefined : embeddedDir(opts);
  const server =
    opts.embedded ??
    (await (opts.starting ??
      startEmbeddedServer({ dataDir: dataDir ?? null, loadFrom: opts.loadFrom, log: opts.log })));
  // Exactly one client: PGlite has one session, and the pool is what serialises transactions.
  const { pool, guarded } = makePool(
    { host: server.socketDir, port: server.port, user: 'postgres', database: 'postgres', max: 1 },
    opts.poolTimeoutMs,
  );
  const db = kyselyOn(guarded, opts.preparedStatements);
  let closed = false;
  return {
    kind: 'pglite',
    db,
    pool,
    schema: undefined,
    capabilities: { vector: false },
    openCursor: heldCursor(guarded),
    dumpTo: (path) => server.dumpTo(path),
    dataDir,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      // A server the caller gave us is the caller's to stop.
      if (!opts.embedded) await server.stop();
    },
  };
}

/** The database clock, for `set({ updated_at: dbNow() })`: timestamps come from the server, not
 * from whichever node wrote them. (Typed as Date so it fits Date columns in Kysely's `set`.) */
export function dbNow(): Date {
  return sql<Date>`now()` as unknown as Date;
}

/** Runs fn as one unit of work (unit-of-work.ts) in a transaction (Kysely's): what it collects is
 * flushed before the commit, its after-commit work runs only once it committed (events are
 * published, sockets notified), never for a rolled-back change. A statement made on the
 * transaction once it is over is refused by Kysely. */
export async function transaction<T>(db: Db, fn: (uow: UnitOfWork) => PromiseLike<T>): Promise<T> {
  const registry = unitOfWorkRegistry(db);
  let unit: UnitOfWork | undefined;
  const body = async (trx: Trx) => {
    unit = new UnitOfWork(trx, registry);
    const value = await fn(unit);
    await unit.flush();
    return value;
  };
  const result = await traced('db.transaction', {}, () => db.transaction().execute(body));
  unit!.committed();
  return result;
}

/** Runs fn in the caller's unit of work when there is one, else as a unit of its own. */
export async function inUnit<T>(
  db: Db,
  uow: UnitOfWork | undefined,
  fn: (uow: UnitOfWork) => PromiseLike<T>,
): Promise<T> {
  return uow ? fn(uow) : transaction(db, fn);
}

export { sql };
