// Statements of one transaction made at once and waited for as one (database.ts re-exports it).
/** Statements of one transaction made at once, as `Promise.all` would await them, except that a
 * failure is answered only once every one has settled. With `Promise.all` the transaction would
 * roll back while the others still wait for the connection (Kysely runs a transaction's statements
 * one at a time), and one of them, or a statement a branch makes after the failure, could go out
 * behind the `rollback` and run outside the transaction. */
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
