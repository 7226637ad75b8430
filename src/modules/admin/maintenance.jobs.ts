// Housekeeping that every deployment needs: finished rate-limit windows, long-expired refresh
// tokens, idempotency keys older than a day, the memory's old tombstones (without pgvector) and
// upload contexts past their retention are deleted hourly. The job re-enqueues itself; the
// singleton key keeps one pending run however many nodes start.
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { deleteExpiredRefreshTokens } from '../auth/auth.repository.js';
import { deleteExpiredIdempotencyKeys } from '../../platform/http/idempotency.js';
import type { FilesService } from '../files/files.service.js';
import type { MemoryService } from '../memory/memory.service.js';

export const SWEEP_JOB = 'maintenance.sweep';
const HOUR = 3600;

/** Starts the hourly cycle (once per deployment: the singleton key absorbs repeats). */
export function scheduleMaintenance(jobs: JobQueue, db: Db) {
  return jobs.enqueue(db, SWEEP_JOB, {}, { singletonKey: SWEEP_JOB, startAfterSeconds: 60 });
}

export function defineMaintenanceJobs(
  jobs: JobQueue,
  db: Db,
  counters: CounterStore,
  memory: Pick<MemoryService, 'sweep'>,
  files: Pick<FilesService, 'sweep'>,
) {
  jobs.define({
    name: SWEEP_JOB,
    schema: z.object({}).strict(),
    retryLimit: 3,
    handler: async (_data, { log }) => {
      const counters_ = await counters.sweep();
      await deleteExpiredRefreshTokens(db);
      await deleteExpiredIdempotencyKeys(db, 24);
      const tombstones = await memory.sweep();
      const uploads = await files.sweep();
      log.debug({ counters: counters_, tombstones, uploads }, 'maintenance sweep done');
      await jobs.enqueue(db, SWEEP_JOB, {}, { singletonKey: SWEEP_JOB, startAfterSeconds: HOUR });
    },
  });
}
