// The stale-answer guard behind `useRead` (lib/useRead.ts), kept free of React and of the browser
// so that it is tested on its own: a read's answer is shown only if, when it arrives, its key is
// still the one shown and no newer read of that key has gone out. Without it, switching quickly
// from one workflow instance to another could show the first one's tasks under the second.

/** What a read answers: openapi-fetch's `{ data }` or `{ error }`. */
export interface Answer<T> {
  data?: T;
  error?: unknown;
}

/** What is shown for one key: its data (kept while it is read again), the last read's error. */
export interface ReadState<T> {
  key: string;
  data: T | undefined;
  error: unknown;
  loading: boolean;
}

export const initialState = <T>(key: string): ReadState<T> => ({
  key,
  data: undefined,
  error: null,
  loading: true,
});

/** Numbers requests so that only the newest one's answer counts, and none once closed. The
 * timeline's pages use it directly (pages/observer/useTimeline.ts), every other read through
 * KeyedReads below. */
export class NewestOnly {
  #newest = 0;
  #closed = false;

  /** A new request: the check it returns holds while no newer one started and none is closed. */
  start(): () => boolean {
    const mine = ++this.#newest;
    return () => !this.#closed && mine === this.#newest;
  }

  close(): void {
    this.#closed = true;
  }
}

/** The reads of one key. Make a new one when the key changes, and close the old one: its answers
 * still on their way are then dropped. */
export class KeyedReads<T> {
  readonly #requests = new NewestOnly();

  constructor(
    readonly key: string,
    private readonly show: (update: (s: ReadState<T>) => ReadState<T>) => void,
  ) {}

  /** Reads once; resolves when the answer is shown or dropped. A failure to fetch at all (the
   * network) is shown as the error. */
  async read(load: () => Promise<Answer<T>>): Promise<void> {
    const current = this.#requests.start();
    if (!current()) return;
    this.show((s) => (s.loading ? s : { ...s, loading: true }));
    let answer: Answer<T>;
    try {
      answer = await load();
    } catch (error) {
      answer = { error };
    }
    if (!current()) return;
    this.show((s) =>
      answer.error !== undefined && answer.error !== null
        ? { ...s, error: answer.error, loading: false }
        : { ...s, data: answer.data, error: null, loading: false },
    );
  }

  /** The key is no longer shown (another key, or the component is gone). */
  close(): void {
    this.#requests.close();
  }
}
