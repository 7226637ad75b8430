// Reads by key, batched across concurrent callers: the calls made while the loader's previous
// statement runs, or in the same turn of the event loop, share one statement, `key = any($1)`.
// One statement of a loader is in flight at a time, so under load a batch grows to whatever
// arrived meanwhile: a hot by-id read (the profile) costs one round trip per batch instead of one
// per request, fewer socket writes to PostgreSQL and, on the embedded database (one connection
// serving statements in turn), fewer statements queued behind each other. A lone call waits
// only for the end of the current turn (`setImmediate`).
//
// Each read still sees what committed before its statement ran, which is after the call: a caller
// reads its own writes. Only for reads outside a transaction: a batch runs on the pool.

export type BatchRead<K, R> = (keys: K[]) => Promise<R[]>;

/** A loader of one row by key; `keyOf` names the key of a row that `read` returned. Rows `read`
 * does not return come back undefined. A failed statement fails every call of its batch. */
export function batchedByKey<K, R>(
  read: BatchRead<K, R>,
  keyOf: (row: R) => K,
): (key: K) => Promise<R | undefined> {
  return batcher(
    async (keys: K[]) => new Map((await read(keys)).map((r) => [keyOf(r), r] as const)),
    undefined,
  );
}

/** A loader of every row of a key (none: an empty list), otherwise as `batchedByKey`. */
export function batchedGroupsByKey<K, R>(
  read: BatchRead<K, R>,
  keyOf: (row: R) => K,
): (key: K) => Promise<R[]> {
  return batcher(async (keys: K[]) => {
    const groups = new Map<K, R[]>();
    for (const row of await read(keys)) {
      const group = groups.get(keyOf(row));
      if (group) group.push(row);
      else groups.set(keyOf(row), [row]);
    }
    return groups;
  }, []);
}

/** Writes batched the same way: the items given while the previous batch is written, or in the
 * same turn of the event loop, are written together by one call of `write` (e.g. one
 * transaction); a failed batch fails every call of it. Unlike the loaders, for writes of one
 * owner (a batcher per run, say), where a call's wait for the batch before it is the price of
 * one transaction instead of several at once. */
export function batchedWrites<T extends object>(
  write: (items: T[]) => Promise<void>,
): (item: T) => Promise<void> {
  return batcher(async (items: T[]) => {
    await write(items);
    return new Map<T, undefined>();
  }, undefined);
}

function batcher<K, V>(readMany: (keys: K[]) => Promise<Map<K, V>>, missing: V): (key: K) => Promise<V> {
  type Caller = { resolve: (value: V) => void; reject: (err: unknown) => void };
  let waiting = new Map<K, Caller[]>();
  let scheduled = false;
  let reading = false;

  function schedule() {
    if (scheduled || reading || waiting.size === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  }

  async function flush() {
    const batch = waiting;
    waiting = new Map();
    reading = true;
    try {
      const values = await readMany([...batch.keys()]);
      for (const [key, callers] of batch) for (const c of callers) c.resolve(values.get(key) ?? missing);
    } catch (err) {
      for (const callers of batch.values()) for (const c of callers) c.reject(err);
    } finally {
      reading = false;
      schedule();
    }
  }

  return (key) =>
    new Promise((resolve, reject) => {
      const callers = waiting.get(key);
      if (callers) callers.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      schedule();
    });
}
