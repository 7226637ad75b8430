// What a job is enqueued with: the caller's options, and how pg-boss takes them with the job's
// definition (queue.ts `enqueue` and `enqueueMany`).

export interface EnqueueOptions {
  /** Names the job. On its own it deduplicates nothing (the queues use pg-boss's standard policy);
   * with `singletonSeconds`, at most one job per key is created in each window of that length
   * (another send in the window creates nothing and answers null). */
  singletonKey?: string;
  singletonSeconds?: number;
  startAfterSeconds?: number;
}

/** A job's options as pg-boss takes them, the same for `send` and for `insert`: the definition's
 * retries (exponential backoff) and the caller's key, window and delay. */
export function jobOptions(
  def: { retryLimit?: number; retryDelay?: number; expireInSeconds?: number },
  options: EnqueueOptions,
) {
  return {
    retryLimit: def.retryLimit ?? 5,
    retryDelay: def.retryDelay ?? 2,
    retryBackoff: true,
    ...(def.expireInSeconds ? { expireInSeconds: def.expireInSeconds } : {}),
    ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
    ...(options.singletonSeconds ? { singletonSeconds: options.singletonSeconds } : {}),
    // As a string, as `send` turns a number into (`insert` takes it as given).
    ...(options.startAfterSeconds ? { startAfter: String(options.startAfterSeconds) } : {}),
  };
}
