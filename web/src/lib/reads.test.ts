import { describe, expect, it } from 'vitest';
import { initialState, KeyedReads, NewestOnly, type Answer, type ReadState } from './reads';

/** A fetch the test answers by hand, in any order. */
function deferred<T>() {
  let answer!: (a: Answer<T>) => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<Answer<T>>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  return { promise, answer, fail };
}

/** What a component would show: the state of the key it opened last, as `useRead` keeps it. */
function screen<T>() {
  let state: ReadState<T> | null = null;
  let opened: KeyedReads<T> | null = null;
  return {
    get state() {
      return state;
    },
    open(key: string): KeyedReads<T> {
      opened?.close();
      state = initialState<T>(key);
      opened = new KeyedReads<T>(key, (update) => {
        if (state?.key === key) state = update(state);
      });
      return opened;
    },
  };
}

describe('KeyedReads: only the shown key’s newest answer is shown', () => {
  it('shows an answer for the key still shown', async () => {
    const s = screen<string[]>();
    const a = deferred<string[]>();
    const done = s.open('tasks:A').read(() => a.promise);
    expect(s.state).toMatchObject({ key: 'tasks:A', data: undefined, loading: true });
    a.answer({ data: ['a1'] });
    await done;
    expect(s.state).toMatchObject({ key: 'tasks:A', data: ['a1'], error: null, loading: false });
  });

  it('drops the answer of a key switched away from, even when it arrives last', async () => {
    const s = screen<string[]>();
    const a = deferred<string[]>();
    const b = deferred<string[]>();
    const readA = s.open('tasks:A').read(() => a.promise);
    const readB = s.open('tasks:B').read(() => b.promise);
    b.answer({ data: ['b1'] });
    await readB;
    a.answer({ data: ['a1'] });
    await readA;
    expect(s.state).toMatchObject({ key: 'tasks:B', data: ['b1'], loading: false });
  });

  it('shows nothing of the last key while the new one loads', async () => {
    const s = screen<string[]>();
    const a = deferred<string[]>();
    const readA = s.open('tasks:A').read(() => a.promise);
    void s.open('tasks:B').read(() => new Promise<Answer<string[]>>(() => undefined));
    a.answer({ data: ['a1'] });
    await readA;
    expect(s.state).toMatchObject({ key: 'tasks:B', data: undefined, loading: true });
  });

  it('of two reads of one key, keeps the newer answer whatever the order', async () => {
    const s = screen<number>();
    const reads = s.open('instance:A');
    const first = deferred<number>();
    const second = deferred<number>();
    const one = reads.read(() => first.promise);
    const two = reads.read(() => second.promise);
    second.answer({ data: 2 });
    await two;
    first.answer({ data: 1 });
    await one;
    expect(s.state?.data).toBe(2);
  });

  it('drops every answer once closed (the component is gone)', async () => {
    let shown = 0;
    const reads = new KeyedReads<number>('k', () => shown++);
    const a = deferred<number>();
    const done = reads.read(() => a.promise);
    const before = shown; // the loading mark
    reads.close();
    a.answer({ data: 1 });
    await done;
    expect(shown).toBe(before);
    await reads.read(() => Promise.resolve({ data: 2 }));
    expect(shown).toBe(before);
  });

  it('shows a refusal or a failed fetch as the error, keeping what was shown', async () => {
    const s = screen<string[]>();
    const reads = s.open('tasks:A');
    await reads.read(() => Promise.resolve({ data: ['a1'] }));
    await reads.read(() => Promise.resolve({ error: { code: 'forbidden' } }));
    expect(s.state).toMatchObject({ data: ['a1'], error: { code: 'forbidden' }, loading: false });
    const failed = deferred<string[]>();
    const done = reads.read(() => failed.promise);
    failed.fail(new TypeError('Failed to fetch'));
    await done;
    expect(s.state?.error).toBeInstanceOf(TypeError);
    await reads.read(() => Promise.resolve({ data: ['a2'] }));
    expect(s.state).toMatchObject({ data: ['a2'], error: null });
  });
});

describe('NewestOnly', () => {
  it('holds for the newest request only, and for none once closed', () => {
    const requests = new NewestOnly();
    const first = requests.start();
    expect(first()).toBe(true);
    const second = requests.start();
    expect([first(), second()]).toEqual([false, true]);
    requests.close();
    expect(second()).toBe(false);
    expect(requests.start()()).toBe(false);
  });
});
