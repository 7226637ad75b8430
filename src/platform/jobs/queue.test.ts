// The job queue on the real database: jobs sent inside a transaction exist exactly when it
// commits, a failing job is retried, and enqueueing on a node without workers never deadlocks on
// the embedded database's single connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { transaction } from '../db/database.js';
import { SWEEP_JOB } from '../../modules/admin/maintenance.jobs.js';

describe('job queue on an API-only node', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ SERVICES: 'api', DB_POOL_TIMEOUT_MS: '2000' });
  });
  afterAll(() => t.close());

  it('enqueues inside a transaction without waiting for a second connection', async () => {
    const started = Date.now();
    const id = await transaction(t.deps.db, (trx) => t.deps.jobs.enqueue(trx, SWEEP_JOB, {}));
    expect(typeof id).toBe('string');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('rolls the job back with the transaction', async () => {
    const before = await t.deps.jobs.status();
    await expect(
      transaction(t.deps.db, async (trx) => {
        await t.deps.jobs.enqueue(trx, SWEEP_JOB, {});
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const after = await t.deps.jobs.status();
    const queued = (s: typeof before) => s.queues.find((q) => q.name === SWEEP_JOB)?.queued ?? 0;
    expect(queued(after)).toBe(queued(before));
  });

  it('refuses a job that is not defined, and data that does not fit its schema', async () => {
    await expect(t.deps.jobs.enqueue(t.deps.db, 'no.such.job', {})).rejects.toThrow(/no job named/);
    await expect(t.deps.jobs.enqueue(t.deps.db, SWEEP_JOB, { unexpected: 1 })).rejects.toThrow();
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
    const { JobQueue } = await import('./queue.js');
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
});
