// Waiting for a condition in tests without asserting on the clock: `eventually` re-checks on
// each turn of the event loop (after a short yield) until the check passes, and fails with the
// check's own last error only when the generous deadline passes (a failsafe against a hang, never
// a timing claim).

export interface EventuallyOptions {
  /** The failsafe: how long to keep trying before failing the test (default 10 s). */
  timeoutMs?: number;
  /** Pause between checks (default 10 ms). */
  intervalMs?: number;
}

/** Resolves with the check's value once it returns without throwing and is not `false`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 10 }: EventuallyOptions = {},
): Promise<Exclude<T, false>> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false) return value as Exclude<T, false>;
      last = new Error('the condition never held');
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) throw last;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
