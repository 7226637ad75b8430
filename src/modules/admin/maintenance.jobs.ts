// Housekeeping that every deployment needs: finished rate-limit windows and long-expired
// refresh tokens are deleted hourly. The job re-enqueues itself; the singleton key keeps one
// pending run however many nodes start.
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { deleteExpiredRefreshTokens } from '../auth/auth.repository.js';

export const SWEEP_JOB = 'maintenance.sweep';
const HOUR = 3600;

export function defineMaintenanceJobs(jobs: JobQueue, db: Db, counters: CounterStore) {
  jobs.define({
    name: SWEEP_JOB,
    schema: z.object({}).strict(),
    retryLimit: 3,
    handler: async (_data, { log }) => {
      const counters_ = await counters.sweep();
      await deleteExpiredRefreshTokens(db);
      log.debug({ counters: counters_ }, 'maintenance sweep done');
      await jobs.enqueue(db, SWEEP_JOB, {}, { singletonKey: SWEEP_JOB, startAfterSeconds: HOUR });
    },
  });
}
