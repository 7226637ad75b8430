// The job queue on the real database: jobs sent inside a transaction exist exactly when it
// commits, a failing job is retried, and enqueueing on a node without workers never deadlocks on
// the embedded database's single connection.
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { sql, transaction } from '../db/database.js';
import { fetchAgainAtOnce, JobQueue } from './queue.js';

const NOOP = 'test.noop';
const MANY = 'test.many';

describe('job queue on an API-only node', () => {
  let t: TestApp;
  let q: JobQueue;
  beforeAll(async () => {
    t = await createTestApp({ SERVICES: 'api', DB_POOL_TIMEOUT_MS: '2000' });
    // A queue with a job of this test's own, started as an API-only node starts it: no workers.
    q = new JobQueue(t.deps.database, t.deps.log);
    q.define({ name: NOOP, schema: z.object({}).strict(), handler: async () => undefined });
    q.define({
      name: MANY,
      schema: z.object({ n: z.number() }).strict(),
      retryLimit: 3,
      retryDelay: 7,
      handler: async () => undefined,
    });
    await q.start({ work: false });
  });
  afterAll(async () => {
    await q.stop();
    await t.close();
  });

  /** Jobs of this test's kind stored in pg-boss's table, whatever their state. */
  async function stored(): Promise<number> {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`${q.schema}.job`)}
      where name = ${NOOP}`.execute(t.deps.db);
    return r.rows[0]!.n;
  }

  it('enqueues inside a transaction without asking for a second connection', async () => {
    // Every connection the pool hands out for the transaction's work: the transaction's own, and
    // any a cold pg-boss lookup would take beside it (on PGlite's single connection that one
    // would wait behind the transaction until the pool timeout failed it with DatabaseBusyError).
    // Only the calls made from within the transaction count: the node's own timers (its liveness
    // beat, pg-boss's upkeep) use the pool too, at moments of their own.
    const before = await stored();
    const pool = t.deps.database.pool;
    const connect = pool.connect.bind(pool);
    const inside = new AsyncLocalStorage<true>();
    let fromTransaction = 0;
    const spy = vi.spyOn(pool, 'connect').mockImplementation(((...args: Parameters<typeof connect>) => {
      if (inside.getStore()) fromTransaction++;
      return connect(...args);
    }) as typeof pool.connect);
    try {
      const id = await inside.run(true, () => transaction(t.deps.db, ({ trx }) => q.enqueue(trx, NOOP, {})));
      expect(typeof id).toBe('string');
      expect(fromTransaction).toBe(1);
    } finally {
      spy.mockRestore();
    }
    expect(await stored()).toBe(before + 1);
  });

  it('rolls the job back with the transaction', async () => {
    const before = await stored();
    await expect(
      transaction(t.deps.db, async ({ trx }) => {
        await q.enqueue(trx, NOOP, {});
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await stored()).toBe(before);
  });

  it('enqueues many jobs in one statement, each as enqueue makes it, rolled back with the transaction', async () => {
    const columns = sql`data->>'n' as n, priority, retry_limit, retry_delay, retry_backoff, retry_delay_max,
      expire_seconds, deletion_seconds, policy, dead_letter, heartbeat_seconds, state, singleton_key,
      singleton_on, (start_after - created_on)::text as delay, (keep_until - start_after)::text as kept`;
    const rows = async () =>
      (
        await sql<Record<string, unknown>>`select ${columns} from ${sql.table(`${q.schema}.job`)}
          where name = ${MANY} order by data->>'n'`.execute(t.deps.db)
      ).rows;
    let statements = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => (statements++, args.result),
    };
    await transaction(t.deps.db, ({ trx }) => q.enqueue(trx, MANY, { n: 0 }, { startAfterSeconds: 30 }));
    await transaction(t.deps.db, ({ trx }) =>
      q.enqueueMany(trx.withPlugin(counter), MANY, [{ n: 1 }, { n: 2 }], { startAfterSeconds: 30 }),
    );
    expect(statements).toBe(1);
    const [one, ...many] = await rows();
    expect(many.map((r) => r.n)).toEqual(['1', '2']);
    for (const r of many) expect({ ...r, n: one!.n }).toEqual(one);
    expect(one).toMatchObject({ retry_limit: 3, retry_delay: 7, retry_backoff: true, delay: '00:00:30' });

    await expect(
      transaction(t.deps.db, async ({ trx }) => {
        await q.enqueueMany(trx, MANY, [{ n: 3 }]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    // Data that does not fit refuses them all, before anything is sent.
    await expect(q.enqueueMany(t.deps.db, MANY, [{ n: 4 }, { n: 'five' }])).rejects.toMatchObject({
      name: 'ZodError',
    });
    expect(await rows()).toHaveLength(3);
  });

  it('refuses a job that is not defined, and data that does not fit its schema', async () => {
    await expect(q.enqueue(t.deps.db, 'no.such.job', {})).rejects.toThrow(/no job named/);
    await expect(q.enqueue(t.deps.db, NOOP, { unexpected: 1 })).rejects.toMatchObject({
      name: 'ZodError',
      issues: [expect.objectContaining({ code: 'unrecognized_keys', keys: ['unexpected'] })],
    });
  });
});

describe('fetching again at once', () => {
  it('only after a full batch: a shorter one waits for the poll, so what comes meanwhile gathers', () => {
    expect(fetchAgainAtOnce(1, 1)).toBe(true);
    expect(fetchAgainAtOnce(50, 50)).toBe(true);
    expect(fetchAgainAtOnce(3, 50)).toBe(false);
    expect(fetchAgainAtOnce(0, 1)).toBe(false);
  });
});

describe('job queue workers', () => {
  let t: TestApp;
  const seen: number[] = [];
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('retries a failing job until it succeeds', async () => {
    // A second queue on the same database, with a job of its own (defined before start).
    const q = new JobQueue(t.deps.database, t.deps.log);
    let attempts = 0;
    q.define({
      name: 'test.flaky',
      schema: z.object({ n: z.number() }),
      retryLimit: 3,
      retryDelay: 1,
      handler: async ({ n }) => {
        attempts++;
        if (attempts < 2) throw new Error('first attempt fails');
        seen.push(n);
      },
    });
    await q.start({ work: true });
    try {
      await q.enqueue(t.deps.db, 'test.flaky', { n: 7 });
      await q.drain(20_000);
      expect(seen).toEqual([7]);
      expect(attempts).toBe(2);
    } finally {
      await q.stop();
    }
  });

  it('handles the jobs of one fetched batch with the same coalescing key once', async () => {
    const q = new JobQueue(t.deps.database, t.deps.log);
    const handled: string[] = [];
    q.define({
      name: 'test.coalesce',
      schema: z.object({ key: z.string(), n: z.number() }),
      batchSize: 10,
      pollingIntervalSeconds: 1,
      coalesceBy: (d) => d.key,
      handler: async ({ key, n }) => {
        handled.push(`${key}${n}`);
      },
    });
    await q.start({ work: true });
    try {
      // Sent in one transaction (no wake-up): the worker's next poll fetches them as one batch.
      await transaction(t.deps.db, async ({ trx }) => {
        for (const [key, n] of [
          ['a', 1],
          ['b', 2],
          ['a', 3],
          ['b', 4],
          ['c', 5],
        ] as const)
          await q.enqueue(trx, 'test.coalesce', { key, n });
      });
      await q.drain(20_000);
      // One of each key (a batch comes in pg-boss's order, not the order sent).
      expect(handled.map((h) => h[0]).sort()).toEqual(['a', 'b', 'c']);
    } finally {
      await q.stop();
    }
  });

  it('handles a batch side by side when asked; a failed job fails its batch, run again', async () => {
    const q = new JobQueue(t.deps.database, t.deps.log);
    // Each handler waits until all three of the batch have started: one after the other, the first
    // would wait forever and the drain would fail.
    let started = 0;
    let allStarted!: () => void;
    const barrier = new Promise<void>((r) => (allStarted = r));
    const runs: number[] = [];
    const done = new Set<number>();
    q.define({
      name: 'test.side-by-side',
      schema: z.object({ n: z.number() }),
      batchSize: 3,
      pollingIntervalSeconds: 1,
      retryLimit: 2,
      retryDelay: 1,
      batchSideBySide: true,
      handler: async ({ n }) => {
        runs.push(n);
        if (done.has(n)) return;
        if (++started === 3) allStarted();
        await barrier;
        if (n === 2 && runs.filter((r) => r === 2).length === 1) throw new Error('first attempt fails');
        done.add(n);
      },
    });
    await q.start({ work: true });
    try {
      // One transaction, no wake-up: the worker's next poll fetches the three as one batch.
      await transaction(t.deps.db, async ({ trx }) => {
        for (const n of [1, 2, 3]) await q.enqueue(trx, 'test.side-by-side', { n });
      });
      await q.drain(20_000);
      expect([...done].sort()).toEqual([1, 2, 3]);
      // The batch ran once side by side; its failure ran each of its jobs again.
      expect(runs.slice(0, 3).sort()).toEqual([1, 2, 3]);
      expect(runs.slice(3).sort()).toEqual([1, 2, 3]);
    } finally {
      await q.stop();
    }
  });

  it('runs a job sent outside a transaction, and a backlog, without waiting for the poll', async () => {
    // Polls only every 5 minutes: a job runs before the test times out only because the send woke
    // an idle worker, and the backlog drains only because a worker that got a job fetches again
    // at once instead of sleeping until its next poll.
    const q = new JobQueue(t.deps.database, t.deps.log);
    const done: number[] = [];
    let all!: () => void;
    const finished = new Promise<void>((ok) => (all = ok));
    q.define({
      name: 'test.wake',
      schema: z.object({ n: z.number() }),
      pollingIntervalSeconds: 300,
      localConcurrency: 2,
      handler: async ({ n }) => {
        done.push(n);
        if (done.length === 6) all();
      },
    });
    await q.start({ work: true });
    try {
      // The workers' first fetch finds nothing; after it they sleep for the poll interval.
      await new Promise<void>((ok) => setImmediate(ok));
      for (let n = 1; n <= 6; n++) await q.enqueue(t.deps.db, 'test.wake', { n });
      await finished;
      expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      await q.stop();
    }
  }, 60_000);

  it('drains a backlog of full batches without waiting for the poll', async () => {
    // Batches of two and a poll every 5 minutes: the seven jobs (sent in one transaction: no
    // wake-up) are handled before the test times out only because a full batch is followed by
    // a fetch at once; the last, short one then ends it.
    const q = new JobQueue(t.deps.database, t.deps.log);
    const done: number[] = [];
    let all!: () => void;
    const finished = new Promise<void>((ok) => (all = ok));
    q.define({
      name: 'test.backlog',
      schema: z.object({ n: z.number() }),
      batchSize: 2,
      pollingIntervalSeconds: 300,
      handler: async ({ n }) => {
        done.push(n);
        if (done.length === 7) all();
      },
    });
    await q.start({ work: true });
    try {
      await new Promise<void>((ok) => setImmediate(ok));
      await transaction(t.deps.db, async ({ trx }) => {
        for (let n = 1; n <= 7; n++) await q.enqueue(trx, 'test.backlog', { n });
      });
      q.wake('test.backlog');
      await finished;
      expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    } finally {
      await q.stop();
    }
  }, 60_000);
});
