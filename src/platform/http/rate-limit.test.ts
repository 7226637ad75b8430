// The counter stores' fixed windows, on an injected clock for the in-process one (the embedded
// database's), and the same behaviour from the database's table (the PostgreSQL lane's store).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { DbCounterStore, MemoryCounterStore, type CounterStore } from './rate-limit.js';

function behaves(name: string, make: () => { store: CounterStore; advance?: (ms: number) => void }) {
  describe(name, () => {
    it('counts hits in a window, peeks and resets', async () => {
      const { store } = make();
      const key = `k-${Math.random()}`;
      // The window ends its length after the first hit (bracketed by the clock read around it),
      // and a later hit in it does not move its end.
      const before = Date.now();
      const first = await store.hit(key, 60_000);
      const after = Date.now();
      expect(first.count).toBe(1);
      expect(first.resetAt).toBeGreaterThanOrEqual(before + 60_000);
      expect(first.resetAt).toBeLessThanOrEqual(after + 60_000);
      const second = await store.hit(key, 60_000);
      expect(second.count).toBe(2);
      expect(second.resetAt).toBe(first.resetAt);
      expect((await store.peek(key))?.count).toBe(2);
      await store.reset(key);
      expect(await store.peek(key)).toBeNull();
      expect((await store.hit(key, 60_000)).count).toBe(1);
    });

    it('parallel hits are each counted once', async () => {
      const { store } = make();
      const key = `p-${Math.random()}`;
      const counts = await Promise.all(Array.from({ length: 20 }, () => store.hit(key, 60_000)));
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    });
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

behaves('MemoryCounterStore', () => ({ store: new MemoryCounterStore() }));
behaves('DbCounterStore', () => ({ store: new DbCounterStore(t.deps.db) }));

describe('MemoryCounterStore windows', () => {
  it('a finished window starts again at one, and the sweep drops it', async () => {
    let now = 1_000;
    const store = new MemoryCounterStore(() => now);
    await store.hit('a', 100);
    await store.hit('a', 100);
    await store.hit('b', 1_000);
    now += 100;
    expect(await store.peek('a')).toBeNull();
    expect(await store.sweep()).toBe(1);
    expect((await store.hit('a', 100)).count).toBe(1);
    expect((await store.peek('b'))?.count).toBe(1);
  });
});
