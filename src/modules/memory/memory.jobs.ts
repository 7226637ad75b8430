// The memory module's job: embedding the chunks that wait for an embedding (memory.embedding.ts).
import { z } from 'zod';
import type { JobQueue } from '../../platform/jobs/queue.js';

export const EMBED_JOB = 'memory.embed';

export function defineMemoryJobs(
  jobs: JobQueue,
  embedding: { embedPending(memoryIds: number[], reembed: boolean): Promise<number> },
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
}
