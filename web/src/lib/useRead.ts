// The console's one way to read from the API into a component: `useRead(key, load)` reads when
// the key is first shown and whenever it changes, and shows only the current key's newest answer
// (the guard is in lib/reads.ts). A new key starts empty: nothing of the last one shows while its
// own loads. `revision` reads the same key again, keeping what is shown meanwhile (the record
// moved on); `every` reads it again on a timer while set (a run in progress), and may be worked
// out from what is shown. `null` as the key reads nothing. `keepPrevious` keeps the last key's
// data on screen until the new key's answer replaces it (a slider's state at a time: a blank
// between two positions would flicker); its late answers are dropped all the same.
import { useCallback, useEffect, useRef, useState, type SetStateAction } from 'react';
import { describe } from '../api/client';
import { initialState, KeyedReads, type Answer, type ReadState } from './reads';

export interface Read<T> {
  data: T | undefined;
  /** The last read's failure as a sentence, for the card that shows this data. */
  error: string | null;
  loading: boolean;
  /** Reads the current key again; resolves once its answer is shown (or dropped). */
  reload: () => Promise<void>;
  /** Changes what is shown locally (a saved row), until the next answer. */
  set: (update: SetStateAction<T | undefined>) => void;
}

export function useRead<T>(
  key: string | null,
  load: () => Promise<Answer<T>>,
  {
    revision,
    every,
    keepPrevious = false,
  }: {
    revision?: unknown;
    every?: number | null | ((shown: T | undefined) => number | null);
    keepPrevious?: boolean;
  } = {},
): Read<T> {
  const [state, setState] = useState<ReadState<T> | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reads = useRef<KeyedReads<T> | null>(null);
  const keyRef = useRef(key);
  keyRef.current = key;
  // The revision the current key's reads started from: a change reads again.
  const readAt = useRef<unknown>(undefined);

  useEffect(() => {
    if (key === null) return;
    const mine = new KeyedReads<T>(key, (update) => setState((s) => (s?.key === key ? update(s) : s)));
    reads.current = mine;
    readAt.current = revision;
    setState((last) => ({ ...initialState<T>(key), data: keepPrevious ? last?.data : undefined }));
    void mine.read(() => loadRef.current());
    return () => {
      mine.close();
      if (reads.current === mine) reads.current = null;
    };
    // The revision is read at the key's start only; the effect below follows its changes.
  }, [key]);

  useEffect(() => {
    if (Object.is(readAt.current, revision)) return;
    readAt.current = revision;
    void reads.current?.read(() => loadRef.current());
  }, [revision]);

  // Until the effect has opened the new key, the last key's state is still held: never show it
  // (unless asked to keep it, and then as loading).
  const shown =
    key !== null && state?.key === key
      ? state
      : keepPrevious && key !== null && state
        ? { ...state, loading: true }
        : null;
  const period = typeof every === 'function' ? every(shown?.data) : every;
  useEffect(() => {
    if (key === null || !period) return;
    const timer = setInterval(() => void reads.current?.read(() => loadRef.current()), period);
    return () => clearInterval(timer);
  }, [key, period]);

  const reload = useCallback(async () => {
    await reads.current?.read(() => loadRef.current());
  }, []);
  const set = useCallback(
    (update: SetStateAction<T | undefined>) =>
      setState((s) =>
        s === null || s.key !== keyRef.current
          ? s
          : {
              ...s,
              data:
                typeof update === 'function'
                  ? (update as (d: T | undefined) => T | undefined)(s.data)
                  : update,
            },
      ),
    [],
  );

  return {
    data: shown?.data,
    error: shown && shown.error !== null ? describe(shown.error) : null,
    loading: key !== null && (shown?.loading ?? true),
    reload,
    set,
  };
}
