// The one place that changes a library's behaviour from outside: Kysely 0.29's
// SingleConnectionProvider, checked on the range package.json pins (^0.29.9, that is 0.29.x).
// Kysely offers no option or extension point for it (the provider is made inside its driver
// for each transaction), so it is replaced here, once per process, and tested twice:
// kysely-provider.test.ts fails on another Kysely minor version or if the replacement is gone, and
// database.test.ts ("sends a transaction's begin with its first statement, and its independent
// statements together") fails if statements of a transaction wait for each other again.
import { SingleConnectionProvider, type DatabaseConnection } from 'kysely';

/** Kysely hands a transaction's (or `db.connection()`'s) connection to one statement at a time:
 * its SingleConnectionProvider holds each statement back until the one before is answered, for
 * drivers that cannot queue. pg queues, and on our pipelined connections sends at once, so that
 * wait would cost a round trip per statement of those sent `together`. Here the provider hands the
 * connection straight on: statements go out in the order they are made, as pg sends them. Every
 * Kysely of this process runs on such a pool (`makePool`). Kysely still refuses a statement made
 * after the transaction's commit or rollback (its executor checks the transaction's state). */
const connectionOf = new WeakMap<SingleConnectionProvider, Promise<DatabaseConnection>>();
type ProvideOne = (
  this: SingleConnectionProvider,
  consumer: (c: DatabaseConnection) => Promise<DatabaseConnection>,
) => Promise<DatabaseConnection>;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its provider below
const provideOne: ProvideOne = SingleConnectionProvider.prototype.provideConnection;
SingleConnectionProvider.prototype.provideConnection = function <T>(
  this: SingleConnectionProvider,
  consumer: (connection: DatabaseConnection) => Promise<T>,
): Promise<T> {
  let connection = connectionOf.get(this);
  if (!connection) {
    // The connection is private to the provider: asked for once, through its own method.
    connection = provideOne.call(this, async (c: DatabaseConnection) => c);
    connectionOf.set(this, connection);
  }
  return connection.then(consumer);
};
