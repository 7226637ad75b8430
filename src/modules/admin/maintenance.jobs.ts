// Housekeeping that every deployment needs, run hourly: each sweeper belongs to the module (or
// platform part) that owns its table (finished rate-limit windows, long-expired refresh tokens,
// idempotency keys older than a day, the memory's old tombstones without pgvector, upload contexts
// past their retention, finished webhook deliveries and audit entries past theirs). The hour is a
// pg-boss schedule under one key: every worker node sets the same schedule at start, and the
// scheduler files one job per occurrence however many nodes run or restart (a job that enqueued
// its own successor made one more chain of runs with every start).
import { z } from 'zod';
import type { JobQueue } from '../../platform/jobs/queue.js';

export const SWEEP_JOB = 'maintenance.sweep';
/** The schedule's key and its cron: at minute 0 of every hour, UTC. */
export const SWEEP_SCHEDULE = { key: 'hourly', cron: '0 * * * *', timezone: 'UTC' } as const;

/** Named sweeps; each deletes what its owner no longer needs and says how much. */
export type Sweepers = Record<string, () => Promise<unknown>>;

/** Sets the hourly schedule (the same one from every worker node; never inside a transaction). */
export function scheduleMaintenance(jobs: JobQueue) {
  return jobs.schedule(SWEEP_JOB, SWEEP_SCHEDULE.key, SWEEP_SCHEDULE.cron, SWEEP_SCHEDULE.timezone, {});
}

/** Runs every sweep in turn (the hourly job, and the `maintenance_sweep` scheduled task). */
export async function runSweeps(sweepers: Sweepers): Promise<Record<string, unknown>> {
  const swept: Record<string, unknown> = {};
  for (const [name, sweep] of Object.entries(sweepers)) swept[name] = await sweep();
  return swept;
}

export function defineMaintenanceJobs(jobs: JobQueue, sweepers: Sweepers) {
  jobs.define({
    name: SWEEP_JOB,
    schema: z.object({}).strict(),
    retryLimit: 3,
    handler: async (_data, { log }) => {
      log.debug(await runSweeps(sweepers), 'maintenance sweep done');
    },
  });
}
