// The only place that knows whether PGlite or PostgreSQL is running (ARCHITECTURE.md).
// Everything above talks Kysely over `pg`; both engines speak the same wire protocol.
import { resolve } from 'node:path';
import { Socket } from 'node:net';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { redactUrl } from '../redact.js';
import { isUniqueViolation } from './errors.js';
import { startEmbeddedServer, type EmbeddedServer } from './pglite-server.js';
import { heldCursor, postgresCursor, type OpenCursor } from './cursor.js';
import { HeldConnections, StatementAfterEndError } from './held-connection.js';

export { StatementAfterEndError };

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
}

export interface OpenDatabaseOptions {
  /** postgres://… for a server; undefined or memory:// for embedded PGlite. */
  url: string | undefined;
  /** PGlite data directory (ignored for memory:// and servers). */
  dataDir: string;
  poolSize: number;
  poolTimeoutMs: number;
  /** Postgres: put every object in this schema (created if missing). Used to isolate tests. */
  schema?: string | undefined;
  /** PGlite: start from this data-directory tarball instead of an empty cluster. */
  loadFrom?: string | undefined;
  /** PGlite: connect to this running server instead of starting one (closing the database
   * leaves it running). The test harness reuses its servers this way. */
  embedded?: EmbeddedServer | undefined;
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

/** Statements a connection keeps prepared at most (the service has a few hundred shapes). */
const PREPARED_PER_CONNECTION = 500;
/** `in ($1, $2, …)` and multi-row `values (…), (…)`: shapes that change with the input's
 * length, so preparing them would only fill the connection's cache. */
const LIST_SHAPED = /\bin \(\$\d+,|\), \(\$\d+/i;

/** Makes the client run parameterised statements as named prepared statements: the server
 * parses and analyses each shape once per connection (every run is still planned for its
 * parameters: setUp). Statements without parameters and list-shaped ones stay unnamed. */
function preparing(client: pg.PoolClient): void {
  const names = new Map<string, string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      // A known shape costs a lookup; only a new one is checked and named.
      let name = names.get(text);
      if (!name && names.size < PREPARED_PER_CONNECTION && !LIST_SHAPED.test(text))
        names.set(text, (name = `s${names.size + 1}`));
      if (name) return query({ name, text, values }, ...rest);
    }
    return query(text, values, ...rest);
  }) as typeof client.query;
}

/** What `begin` answers (Kysely reads only `command`, `rowCount` and `rows`). */
const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [], oid: 0 };

/** Each connection's transaction state as `pipelining` sees it: whether its transaction's commit
 * or rollback went out (until the pool hands the connection out again or it begins another). */
const endedSessions = new WeakMap<pg.PoolClient, { ended: boolean }>();

/** The connection is pipelined (pg sends a statement without waiting for the answers to those
 * before it). On top of that:
 * - The statements made in one turn of the event loop leave in one write (the socket is corked
 *   at the first and uncorked once the turn's synchronous work and promise callbacks are done).
 *   pg writes each protocol message of a statement on its own (parse, bind, describe, execute,
 *   sync): one system call each, and each may wake the server for a part of the statement; and
 *   statements sent `together` would be a write each.
 * - A transaction's `begin` costs no round trip of its own: it is answered here at once, and
 *   leaves in the same write as the transaction's first statement. That statement carries the
 *   `begin`'s outcome: should the `begin` fail (the connection lost), so does the statement.
 * - Once a transaction's commit or rollback went out, a statement made on the connection is
 *   refused (StatementAfterEndError) until the connection begins another or is handed out again.
 *   `transaction()` refuses such statements itself (held-connection.ts); Kysely's own transactions
 *   (the migrations') refuse them only once the commit is answered, and between, one (a promise
 *   left running when the transaction's callback returned) would run on its own, outside the
 *   transaction. A rollback is let through: Kysely sends one after a commit that failed. */
function pipelining(client: pg.PoolClient): void {
  const stream = (client as unknown as ServiceClient).socket;
  const session = { ended: false };
  endedSessions.set(client, session);
  let begun: Promise<unknown> | undefined;
  let corked = false;
  // process.nextTick from a promise callback runs once the promise callbacks queued are all done:
  // a statement made a few awaits after another (each goes through Kysely's) still joins its write.
  const flush = () => {
    corked = false;
    stream.uncork();
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const text = args[0];
    if (typeof text === 'string' && args.length === 2) {
      // Kysely's statements: `query(text, parameters)`.
      if (text === 'begin') session.ended = false;
      else if (text === 'commit' || text === 'rollback') session.ended = true;
      else if (session.ended) return Promise.reject(new StatementAfterEndError(text));
    }
    if (!corked) {
      corked = true;
      stream.cork();
      process.nextTick(flush);
    }
    // Kysely's `begin`: `query('begin', [])`. It stays corked until the next statement, in
    // whichever turn that comes.
    if (args[0] === 'begin' && args.length === 2 && !begun) {
      stream.cork();
      const sent = query(...args) as Promise<unknown>;
      sent.catch(() => undefined); // its failure reaches the next statement instead
      begun = sent;
      return Promise.resolve(BEGUN);
    }
    const before = begun;
    begun = undefined;
    let r;
    try {
      r = query(...args);
    } finally {
      if (before) stream.uncork();
    }
    if (!before || !(r instanceof Promise)) return r;
    return Promise.all([before, r]).then(([, result]) => result as unknown);
  }) as typeof client.query;
}

/** The pool's client: it makes its connection's socket itself and hands it to pg through pg's
 * `stream` option, so that `pipelining` can cork the socket it holds. (With TLS, pg wraps this
 * socket; corking it still joins the encrypted records of a turn into one write.) */
class ServiceClient extends pg.Client {
  readonly socket: Socket;

  constructor(config?: pg.ClientConfig) {
    const socket = new Socket();
    super({ ...config, stream: () => socket });
    this.socket = socket;
  }
}

/** The connections set up for the guarded pool (`setUp`). */
const readyClients = new WeakSet<pg.PoolClient>();

/** A connection's first use: its session settings, set and awaited before its first statement
 * (a statement sent while another runs is queued by pg, which warns that it will stop doing so),
 * then its statements prepared. Prepared statements are planned for their parameters every time:
 * a generic plan chosen after five runs ranked full-text matches by a default selectivity and
 * made the memory bench's lexical p95 five times slower. What preparing saves is the parse and
 * analysis. */
async function setUp(client: pg.PoolClient): Promise<void> {
  // A connection lost while checked out and between statements (the server restarting, a network
  // cut) is an 'error' event nobody else hears: an uncaught exception. Its next statement fails,
  // and the pool drops it when it is released.
  client.on('error', () => undefined);
  await client.query('set plan_cache_mode = force_custom_plan');
  preparing(client);
  pipelining(client);
  readyClients.add(client);
}

function makePool(config: pg.PoolConfig, timeoutMs: number) {
  const pool = new pg.Pool({
    ...config,
    Client: ServiceClient,
    connectionTimeoutMillis: timeoutMs,
    types: typeParsers,
    // Statements of one connection go out without waiting for the answers to those before:
    // independent statements of a transaction (its events and its job) take one round trip, and a
    // transaction's `begin` none of its own (`pipelining`).
    pipeline: true,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Handed out again (by any path: Kysely's, pg-boss's): its last transaction is over.
  pool.on('acquire', (client) => {
    const session = endedSessions.get(client);
    if (session) session.ended = false;
  });
  const guarded = {
    async connect() {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        if (err instanceof Error && /timeout/i.test(err.message)) throw new DatabaseBusyError(timeoutMs, err);
        throw err;
      }
      if (readyClients.has(client)) return client;
      try {
        await setUp(client);
      } catch (err) {
        client.release(err instanceof Error ? err : true);
        throw err;
      }
      return client;
    },
    end: () => pool.end(),
  };
  return { pool, guarded };
}

/** Each database's transactions and reserved connections (held-connection.ts). */
const heldBy = new WeakMap<Db, HeldConnections<Database>>();

/** The Kysely of a pool, with its transactions and reserved connections. */
function kyselyOn(guarded: ReturnType<typeof makePool>['guarded']): Db {
  const dialect = new PostgresDialect({ pool: guarded as unknown as pg.Pool });
  const db = new Kysely<Database>({ dialect });
  heldBy.set(db, new HeldConnections(dialect));
  return db;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (opts.url && /^postgres(ql)?:\/\//.test(opts.url)) return openPostgres(opts.url, opts);
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
  const db = kyselyOn(guarded);
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
  const inMemory = opts.url?.startsWith('memory://') ?? false;
  const server =
    opts.embedded ??
    (await startEmbeddedServer({
      dataDir: inMemory ? null : resolve(opts.dataDir, 'pglite'),
      loadFrom: opts.loadFrom,
    }));
  // Exactly one client: PGlite has one session, and the pool is what serialises transactions.
  const { pool, guarded } = makePool(
    { host: server.socketDir, port: server.port, user: 'postgres', database: 'postgres', max: 1 },
    opts.poolTimeoutMs,
  );
  const db = kyselyOn(guarded);
  let closed = false;
  return {
    kind: 'pglite',
    db,
    pool,
    schema: undefined,
    capabilities: { vector: false },
    openCursor: heldCursor(guarded),
    dumpTo: (path) => server.dumpTo(path),
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      // A server the caller gave us is the caller's to stop.
      if (!opts.embedded) await server.stop();
    },
  };
}

/** Statements of one transaction sent together (the connection is pipelined: they take one round
 * trip), as `Promise.all` would, except that a failure is answered only once every one has
 * settled. With `Promise.all` the transaction would roll back while the others still run, and a
 * statement one of them sends after the `rollback` would run outside the transaction. */
export async function together<T extends readonly unknown[] | []>(
  work: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = (await Promise.allSettled(work)) as PromiseSettledResult<unknown>[];
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/** The database clock, for `set({ updated_at: dbNow() })`: timestamps come from the server, not
 * from whichever node wrote them. (Typed as Date so it fits Date columns in Kysely's `set`.) */
export function dbNow(): Date {
  return sql<Date>`now()` as unknown as Date;
}

/** Runs fn in a transaction; callbacks registered with `afterCommit` run only once it committed
 * (events are published, sockets notified), never for a rolled-back change. */
export async function transaction<T>(
  db: Db,
  fn: (trx: Trx, afterCommit: (cb: () => void) => void) => Promise<T>,
): Promise<T> {
  const after: (() => void)[] = [];
  const body = (trx: Trx) => fn(trx, (cb) => after.push(cb));
  // A Kysely made elsewhere (not by openDatabase) runs Kysely's own transaction.
  const held = heldBy.get(db);
  const result = await (held ? held.transaction(body) : db.transaction().execute(body));
  for (const cb of after) {
    try {
      cb();
    } catch {
      // An after-commit listener failing must not turn a committed change into an error.
    }
  }
  return result;
}

/** Runs fn on one connection of its own, outside any transaction: statements sent `together` go
 * out in one write. */
export function reserved<T>(db: Db, fn: (conn: Executor) => Promise<T>): Promise<T> {
  const held = heldBy.get(db);
  return held ? held.reserved(fn) : db.connection().execute(fn);
}

export { sql };
