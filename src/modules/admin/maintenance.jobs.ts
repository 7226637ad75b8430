// Housekeeping that every deployment needs, run hourly: each sweeper belongs to the module (or
// platform part) that owns its table (finished rate-limit windows, long-expired refresh tokens,
// idempotency keys older than a day, the memory's old tombstones without pgvector, upload contexts
// past their retention). The job re-enqueues itself; the singleton key keeps one pending run
// however many nodes start.
import { z } from 'zod';
import type { Executor } from '../../platform/db/database.js';
import type { JobQueue } from '../../platform/jobs/queue.js';

export const SWEEP_JOB = 'maintenance.sweep';
const HOUR = 3600;

/** Named sweeps; each deletes what its owner no longer needs and says how much. */
export type Sweepers = Record<string, () => Promise<unknown>>;

/** Starts the hourly cycle (once per deployment: the singleton key absorbs repeats). */
export function scheduleMaintenance(jobs: JobQueue, db: Executor) {
  return jobs.enqueue(db, SWEEP_JOB, {}, { singletonKey: SWEEP_JOB, startAfterSeconds: 60 });
}

/** Runs every sweep in turn (the hourly job, and the `maintenance_sweep` scheduled task). */
export async function runSweeps(sweepers: Sweepers): Promise<Record<string, unknown>> {
  const swept: Record<string, unknown> = {};
  for (const [name, sweep] of Object.entries(sweepers)) swept[name] = await sweep();
  return swept;
}

export function defineMaintenanceJobs(jobs: JobQueue, db: Executor, sweepers: Sweepers) {
  jobs.define({
    name: SWEEP_JOB,
    schema: z.object({}).strict(),
    retryLimit: 3,
    handler: async (_data, { log }) => {
      log.debug(await runSweeps(sweepers), 'maintenance sweep done');
      await jobs.enqueue(db, SWEEP_JOB, {}, { singletonKey: SWEEP_JOB, startAfterSeconds: HOUR });
    },
  });
}
