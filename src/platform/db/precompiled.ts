// Hot statements compiled once. Kysely builds a query's operation tree and compiles it to SQL on
// every call (about 40 µs of CPU), which shows on a route that runs one statement per request (the
// profile, the account check on a cache miss). A precompiled statement keeps Kysely's typed
// builder as its source (and the SQL snapshots their text); each call substitutes its arguments
// into the compiled statement's parameters and runs it on the executor it is given (the pool or a
// transaction).
import type { Compilable, CompiledQuery } from 'kysely';
import type { Executor } from './database.js';

/** `build` must pass each of its arguments to the query as one parameter (`where('id', '=', id)`),
 * never inline it in the SQL or spread it into a list; constants it adds stay as compiled. */
export function precompiled<Args extends unknown[], R>(
  build: (db: Executor, ...args: Args) => Compilable<R>,
): (executor: Executor, ...args: Args) => Promise<R[]> {
  let compiled: CompiledQuery<R> | undefined;
  // For each parameter of the compiled statement: the argument it takes, or -1 for a constant.
  let slots: number[] = [];
  return async (executor, ...args) => {
    if (!compiled) {
      const markers = args.map((_, i) => ({ precompiledArgument: i }));
      const query = build(executor, ...(markers as unknown as Args)).compile();
      slots = query.parameters.map((p) => markers.indexOf(p as (typeof markers)[number]));
      const used = slots.filter((s) => s >= 0);
      if (used.length !== args.length || new Set(used).size !== args.length)
        throw new Error(`precompiled: each argument must be exactly one parameter of: ${query.sql}`);
      compiled = query;
    }
    const template = compiled.parameters;
    const parameters = slots.map((slot, i) => (slot >= 0 ? args[slot] : template[i]));
    return (await executor.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}
