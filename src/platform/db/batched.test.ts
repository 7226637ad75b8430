// The batched by-key reader: calls of one turn share one read; each gets its own row, a missing
// key undefined, a failure reaches every caller of its batch, and the next turn starts a new batch;
// the batched writer likewise.
import { describe, expect, it } from 'vitest';
import { batchedByKey, batchedGroupsByKey, batchedWrites } from './batched.js';

interface Row {
  id: number;
  name: string;
}

function setup(fail = false) {
  const reads: number[][] = [];
  const load = batchedByKey(
    async (ids: number[]) => {
      reads.push(ids);
      if (fail) throw new Error('statement failed');
      return ids.filter((id) => id !== 404).map((id): Row => ({ id, name: `n${id}` }));
    },
    (row) => row.id,
  );
  return { load, reads };
}

describe('batchedByKey', () => {
  it('shares one read among the calls of one turn, each key once', async () => {
    const s = setup();
    const rows = await Promise.all([s.load(1), s.load(2), s.load(1), s.load(3)]);
    expect(rows.map((r) => r?.name)).toEqual(['n1', 'n2', 'n1', 'n3']);
    expect(s.reads).toEqual([[1, 2, 3]]);
  });

  it('answers undefined for a key the read did not return', async () => {
    const s = setup();
    const [found, missing] = await Promise.all([s.load(1), s.load(404)]);
    expect(found?.name).toBe('n1');
    expect(missing).toBeUndefined();
  });

  it('a call after the batch was sent starts a new read (it sees later writes)', async () => {
    const s = setup();
    await s.load(1);
    await s.load(1);
    expect(s.reads).toEqual([[1], [1]]);
  });

  it('a failed read rejects every call of its batch', async () => {
    const s = setup(true);
    const results = await Promise.allSettled([s.load(1), s.load(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
  });

  it('the groups variant gives every row of a key, and none as an empty list', async () => {
    const reads: number[][] = [];
    const load = batchedGroupsByKey(
      async (ids: number[]) => {
        reads.push(ids);
        return ids.flatMap((id) =>
          id === 404
            ? []
            : [
                { id, n: 1 },
                { id, n: 2 },
              ],
        );
      },
      (row) => row.id,
    );
    const [a, b] = await Promise.all([load(1), load(404)]);
    expect(a).toEqual([
      { id: 1, n: 1 },
      { id: 1, n: 2 },
    ]);
    expect(b).toEqual([]);
    expect(reads).toEqual([[1, 404]]);
  });

  it('calls made while a read is in flight wait for it, then share the next one', async () => {
    const reads: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = batchedByKey(
      async (ids: number[]) => {
        reads.push(ids);
        if (reads.length === 1) await gate;
        return ids.map((id) => ({ id }));
      },
      (row) => row.id,
    );
    const first = load(1);
    await new Promise((r) => setImmediate(r)); // the first read is now in flight
    const later = [load(2), load(3)];
    await new Promise((r) => setImmediate(r));
    expect(reads).toEqual([[1]]);
    release();
    expect((await first)?.id).toBe(1);
    expect((await Promise.all(later)).map((r) => r?.id)).toEqual([2, 3]);
    expect(reads).toEqual([[1], [2, 3]]);
  });
});

describe('batchedWrites', () => {
  it('writes the items of one turn together, and those given while a batch is written in the next', async () => {
    const batches: string[][] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((ok) => (releaseFirst = ok));
    const write = batchedWrites(async (items: { name: string }[]) => {
      batches.push(items.map((i) => i.name));
      if (batches.length === 1) await firstHeld;
    });
    const a = write({ name: 'a' });
    const b = write({ name: 'b' });
    // Wait until the first batch is being written, then give two more.
    await new Promise<void>((ok) => setImmediate(ok));
    expect(batches).toEqual([['a', 'b']]);
    const c = write({ name: 'c' });
    const d = write({ name: 'd' });
    await new Promise<void>((ok) => setImmediate(ok));
    expect(batches).toHaveLength(1);
    releaseFirst();
    await Promise.all([a, b, c, d]);
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('fails every call of a failed batch, and the next batch is written', async () => {
    let fail = true;
    const write = batchedWrites(async () => {
      if (fail) throw new Error('transaction failed');
    });
    const results = await Promise.allSettled([write({}), write({})]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(write({})).resolves.toBeUndefined();
  });
});
