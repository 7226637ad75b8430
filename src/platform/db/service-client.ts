// The pool's connections (database.ts `makePool`, through pg-pool's `Client` option): a subclass of
// `pg.Client` whose `query` prepares statements and pipelines them, once `serve()` is called (the
// guarded pool calls it when it sets a connection up; a connection handed out by the raw pool,
// pg-boss's, and the session settings sent before it are plain pg).
import { Socket } from 'node:net';
import pg from 'pg';
import { StatementAfterEndError } from './held-connection.js';

/** Statements a connection keeps prepared at most (the service has a few hundred shapes). */
const PREPARED_PER_CONNECTION = 500;
/** `in ($1, $2, …)` and multi-row `values (…), (…)`: shapes that change with the input's
 * length, so preparing them would only fill the connection's cache. */
const LIST_SHAPED = /\bin \(\$\d+,|\), \(\$\d+/i;

/** What `begin` answers (Kysely reads only `command`, `rowCount` and `rows`). */
const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [], oid: 0 };

type Query = (...args: unknown[]) => unknown;

/**
 * Once serving:
 * - Parameterised statements run as named prepared statements: the server parses and analyses each
 *   shape once per connection (every run is still planned for its parameters: database.ts
 *   `setUp`). Statements without parameters and list-shaped ones stay unnamed.
 * - The connection is pipelined (pg sends a statement without waiting for the answers to those
 *   before it; the pool's `pipeline` option). On top of that, the statements made in one turn of
 *   the event loop leave in one write: the socket is corked at the first and uncorked once the
 *   turn's synchronous work and promise callbacks are done. pg writes each protocol message of a
 *   statement on its own (parse, bind, describe, execute, sync): one system call each, and each may
 *   wake the server for a part of the statement; and statements sent `together` would be a write
 *   each. The client makes its socket itself and hands it to pg through pg's `stream` option, so it
 *   corks a socket it holds (with TLS, pg wraps this socket; corking it still joins the encrypted
 *   records of a turn into one write).
 * - A transaction's `begin` costs no round trip of its own: it is answered here at once, and
 *   leaves in the same write as the transaction's first statement. That statement carries the
 *   `begin`'s outcome: should the `begin` fail (the connection lost), so does the statement.
 * - Once a transaction's commit or rollback went out, a statement made on the connection is
 *   refused (StatementAfterEndError) until the connection begins another or is handed out again
 *   (`handedOut`). `transaction()` refuses such statements itself (held-connection.ts); Kysely's
 *   own transactions (the migrations') refuse them only once the commit is answered, and between,
 *   one (a promise left running when the transaction's callback returned) would run on its own,
 *   outside the transaction. A rollback is let through: Kysely sends one after a commit that
 *   failed.
 */
export class ServiceClient extends pg.Client {
  readonly socket: Socket;
  /** Whether `serve()` was called: the connection is set up. */
  serving = false;
  private readonly names = new Map<string, string>();
  /** Whether this connection's transaction's commit or rollback went out. */
  private ended = false;
  /** A `begin` held corked until the next statement. */
  private begun: Promise<unknown> | undefined;
  private corked = false;

  constructor(config?: pg.ClientConfig) {
    const socket = new Socket();
    super({ ...config, stream: () => socket });
    this.socket = socket;
  }

  /** From now on, statements are prepared and pipelined as above. */
  serve(): void {
    this.serving = true;
  }

  /** The pool handed the connection out again: its last transaction is over. */
  handedOut(): void {
    this.ended = false;
  }

  // Every form of pg's `query` goes through; Kysely's are `query(text, parameters)`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads, passed through
  override query(...args: any[]): any {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called on this client below
    const plain = super.query as (this: pg.Client, ...a: unknown[]) => unknown;
    if (!this.serving) return plain.apply(this, args);
    const send: Query = (...a) => this.prepared(plain, a);
    const text: unknown = args[0];
    if (typeof text === 'string' && args.length === 2) {
      if (text === 'begin') this.ended = false;
      else if (text === 'commit' || text === 'rollback') this.ended = true;
      else if (this.ended) return Promise.reject(new StatementAfterEndError(text));
    }
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      // process.nextTick from a promise callback runs once the promise callbacks queued are all
      // done: a statement made a few awaits after another (each goes through Kysely's) still joins
      // its write.
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    // Kysely's `begin`: `query('begin', [])`. It stays corked until the next statement, in
    // whichever turn that comes.
    if (text === 'begin' && args.length === 2 && !this.begun) {
      this.socket.cork();
      const sent = send(...args) as Promise<unknown>;
      sent.catch(() => undefined); // its failure reaches the next statement instead
      this.begun = sent;
      return Promise.resolve(BEGUN);
    }
    const before = this.begun;
    this.begun = undefined;
    let r;
    try {
      r = send(...args);
    } finally {
      if (before) this.socket.uncork();
    }
    if (!before || !(r instanceof Promise)) return r;
    return Promise.all([before, r]).then(([, result]) => result as unknown);
  }

  /** A parameterised statement as a named prepared one (a known shape costs a lookup; only a new
   * one is checked and named). */
  private prepared(plain: (this: pg.Client, ...a: unknown[]) => unknown, args: unknown[]): unknown {
    const [text, values, ...rest] = args;
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      let name = this.names.get(text);
      if (!name && this.names.size < PREPARED_PER_CONNECTION && !LIST_SHAPED.test(text))
        this.names.set(text, (name = `s${this.names.size + 1}`));
      if (name) return plain.call(this, { name, text, values }, ...rest);
    }
    return plain.apply(this, args);
  }
}
