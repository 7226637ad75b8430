// Reads of different owners run as one statement. A caller that awaits several reads together (a
// chat turn's context: the player's quests and relationships, the inventory, the balance, the
// memory search's full-text side and the sketch index's catch-up) would otherwise send one
// statement each, and on this stack a statement's cost is mostly its round trip: the socket write
// that wakes the database, the protocol messages, the answer's parse. Each owner still writes its
// own SQL, as one value (Kysely's `jsonArrayFrom`, `jsonBuildObject`, a scalar subquery); the
// values asked for on one database before the pending microtasks run (the calls a `Promise.all`
// makes, down to each owner's first await) are selected together, `select (<a>) as r0, (<b>) as
// r1, …`, each planned as its own subquery, and each caller gets its own. No read waits for the
// event loop's next turn (the owners' calls are side by side in one synchronous stretch; a batch
// across requests is batched.ts's job, whose loader may read through here).
//
// A failed statement runs its reads again one by one, so one read's error reaches its caller
// alone and the others still answer. Reads on a transaction are its own statements, in its order:
// each runs by itself at once. Only for values of bounded size: the whole statement's answer is
// parsed at once.
import type { AliasableExpression } from 'kysely';
import type { Db } from './database.js';

type Waiting = {
  value: AliasableExpression<unknown>;
  resolve: (v: unknown) => void;
  reject: (err: unknown) => void;
};

const pending = new WeakMap<Db, Waiting[]>();

/** The value of `value` (an expression of one value, read on `db` outside a transaction), selected
 * in one statement with the other values asked for on `db` before the pending microtasks run. */
export function readTogether<T>(db: Db, value: AliasableExpression<T>): Promise<T> {
  if (db.isTransaction) return select(db, [value]).then(([v]) => v as T);
  return new Promise<T>((resolve, reject) => {
    let waiting = pending.get(db);
    if (!waiting) {
      waiting = [];
      pending.set(db, waiting);
      queueMicrotask(() => {
        pending.delete(db);
        void run(db, waiting!);
      });
    }
    waiting.push({ value, resolve: resolve as (v: unknown) => void, reject });
  });
}

async function select(db: Db, values: AliasableExpression<unknown>[]): Promise<unknown[]> {
  const row = (await db
    .selectNoFrom(values.map((v, i) => v.as(`r${i}`)))
    .executeTakeFirstOrThrow()) as Record<string, unknown>;
  return values.map((_, i) => row[`r${i}`]);
}

async function run(db: Db, reads: Waiting[]): Promise<void> {
  try {
    const values = await select(
      db,
      reads.map((r) => r.value),
    );
    reads.forEach((r, i) => r.resolve(values[i]));
  } catch (err) {
    if (reads.length === 1) return reads[0]!.reject(err);
    // Which read failed is unknown: each runs by itself, its error its own.
    await Promise.all(reads.map((r) => run(db, [r])));
  }
}
