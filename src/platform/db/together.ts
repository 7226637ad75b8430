// Statements of one connection sent together and waited for as one (database.ts re-exports it).
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
