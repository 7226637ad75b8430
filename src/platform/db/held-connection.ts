// Transactions and reserved connections whose statements go to their connection as they are made.
// Kysely's own (`db.transaction()`, `db.connection()`) hand their connection to one statement at a
// time: its SingleConnectionProvider waits for each answer, for drivers that cannot queue. pg
// queues, and on this service's pipelined connections (database.ts) sends at once, so here
// statements sent `together` leave in one write and take one round trip. Built from Kysely's
// public parts, as Kysely builds its own: the dialect's driver, compiler and adapter, a
// DefaultQueryExecutor over a ConnectionProvider of ours that hands the held connection straight
// on, and Kysely's `Transaction` (so `isTransaction`, `withPlugin` and the refusal of nested
// transactions are Kysely's).
import {
  DefaultQueryExecutor,
  Kysely,
  Transaction,
  type ConnectionProvider,
  type DatabaseConnection,
  type Dialect,
} from 'kysely';

/** A statement made on a transaction after its commit or rollback was sent: refused, so that it
 * never runs outside its transaction (or in the next one on that connection). */
export class StatementAfterEndError extends Error {
  constructor(what: string) {
    super(`a statement made after its transaction's commit or rollback went out: ${what.slice(0, 80)}`);
    this.name = 'StatementAfterEndError';
  }
}

/** Hands the one connection to every statement at once, until `over`. */
class HeldConnection implements ConnectionProvider {
  over = false;
  constructor(private readonly connection: DatabaseConnection) {}

  provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    if (this.over) return Promise.reject(new StatementAfterEndError('(on a transaction that ended)'));
    return consumer(this.connection);
  }
}

export class HeldConnections<DB> {
  private readonly driver;
  private readonly ready: Promise<void>;
  // Shared by every transaction, as a Kysely shares its own (compiling holds no state between
  // statements).
  private readonly compiler;
  private readonly adapter;

  constructor(private readonly dialect: Dialect) {
    this.driver = dialect.createDriver();
    this.ready = this.driver.init();
    this.compiler = dialect.createQueryCompiler();
    this.adapter = dialect.createAdapter();
  }

  private async hold() {
    await this.ready;
    const connection = await this.driver.acquireConnection();
    const provider = new HeldConnection(connection);
    const props = {
      config: { dialect: this.dialect },
      dialect: this.dialect,
      driver: this.driver,
      executor: new DefaultQueryExecutor(this.compiler, this.adapter, provider),
    };
    return { connection, provider, props };
  }

  /** Runs fn in a transaction: committed when fn resolves, rolled back when it throws. Statements
   * made once the commit or rollback is sent are refused (StatementAfterEndError). */
  async transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    const { connection, provider, props } = await this.hold();
    let begun = false;
    try {
      await this.driver.beginTransaction(connection, {});
      begun = true;
      const result = await fn(new Transaction<DB>(props));
      provider.over = true;
      await this.driver.commitTransaction(connection);
      return result;
    } catch (err) {
      provider.over = true;
      // The rollback's own failure (a connection lost) must not hide why the transaction failed.
      if (begun) await this.driver.rollbackTransaction(connection).catch(() => undefined);
      throw err;
    } finally {
      await this.driver.releaseConnection(connection);
    }
  }

  /** Runs fn with one connection of its own, outside any transaction. */
  async reserved<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T> {
    const { connection, provider, props } = await this.hold();
    try {
      return await fn(new Kysely<DB>(props));
    } finally {
      provider.over = true;
      await this.driver.releaseConnection(connection);
    }
  }
}
