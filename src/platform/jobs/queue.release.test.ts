// A node's drain hands its running jobs back: a job claimed by one node whose handler does not
// finish within the grace is taken by another node at once, not when its claim would expire
// (15 minutes here), and a handler that finishes within the grace completes its job as usual.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { sql } from '../db/database.js';
import { JobQueue } from './queue.js';

const HELD = 'test.held';

describe('job queue drain', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ SERVICES: 'api' });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A node's queue on the test's database whose handler calls `handle`. */
  async function node(handle: (n: number) => Promise<void>): Promise<JobQueue> {
    const q = new JobQueue(t.deps.database, t.deps.log);
    q.define({
      name: HELD,
      schema: z.object({ n: z.number() }),
      retryLimit: 3,
      retryDelay: 60,
      expireInSeconds: 900,
      pollingIntervalSeconds: 1,
      handler: ({ n }) => handle(n),
    });
    await q.start({ work: true });
    return q;
  }

  it('hands a job still running at the end of the grace to another node at once', async () => {
    let started!: () => void;
    const claimed = new Promise<void>((ok) => (started = ok));
    const first = await node(() => {
      started();
      return new Promise<void>(() => undefined); // never finishes on this node
    });
    await first.enqueue(t.deps.db, HELD, { n: 1 });
    await claimed;

    let ranOnSecond!: (n: number) => void;
    const second = new Promise<number>((ok) => (ranOnSecond = ok));
    const other = await node(async (n) => ranOnSecond(n));
    try {
      const { released } = await first.stop({ graceMs: 50 });
      expect(released).toBe(1);
      // Picked up by the other node's next poll: its claim (900 s) and its retry delay (60 s)
      // are not waited for; the test's timeout would end it first.
      expect(await second).toBe(1);
      await other.drain();
    } finally {
      await other.stop();
    }
  }, 30_000);

  it('lets a handler that finishes within the grace complete its job', async () => {
    let started!: () => void;
    const claimed = new Promise<void>((ok) => (started = ok));
    let finish!: () => void;
    const finished: number[] = [];
    const q = await node(async (n) => {
      started();
      await new Promise<void>((ok) => (finish = ok));
      finished.push(n);
    });
    const id = await q.enqueue(t.deps.db, HELD, { n: 2 });
    await claimed;
    const stopping = q.stop({ graceMs: 30_000 });
    finish();
    expect(await stopping).toEqual({ released: 0 });
    expect(finished).toEqual([2]);
    const { rows } = await sql<{ state: string }>`select state from ${sql.table(`${q.schema}.job`)}
      where id = ${id}`.execute(t.deps.db);
    expect(rows[0]?.state).toBe('completed');
  }, 30_000);
});
