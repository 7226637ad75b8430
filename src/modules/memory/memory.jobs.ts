// The memory module's jobs: embedding the chunks that wait for an embedding (memory.embedding.ts),
// and, with a model, reconciling a new exchange with what is stored (memory.reconcile.ts).
import { z } from 'zod';
import type { JobQueue } from '../../platform/jobs/queue.js';

export const EMBED_JOB = 'memory.embed';
export const RECONCILE_JOB = 'memory.reconcile';

export function defineMemoryJobs(
  jobs: JobQueue,
  embedding: { embedPending(memoryIds: number[], reembed: boolean): Promise<number> },
  reconciler: { reconcile(memoryId: number, signal?: AbortSignal): Promise<void> },
) {
  jobs.define({
    name: EMBED_JOB,
    schema: z
      .object({
        memoryIds: z.array(z.number().int().positive()).max(10_000),
        reembed: z.boolean().optional(),
      })
      .strict(),
    retryLimit: 10,
    retryDelay: 1,
    // Every addMemory enqueues a job, but one run embeds everything pending: fetch many per poll
    // so the ones left with nothing to do finish at once instead of one per polling interval.
    batchSize: 50,
    handler: async (data) => {
      await embedding.embedPending(data.memoryIds, data.reembed ?? false);
    },
  });
  jobs.define({
    name: RECONCILE_JOB,
    schema: z.object({ memoryId: z.number().int().positive() }).strict(),
    retryLimit: 3,
    retryDelay: 5,
    expireInSeconds: 300,
    handler: async (data) => reconciler.reconcile(data.memoryId),
  });
}
