// The pass after each instance write (contract "Suggestions"): subscribed to the unit of work's
// `instanceWritten` flush (startup/writes.ts), it hears of every workflow instance a write
// changes, inside the write's transaction; the first time for an instance in that unit it adds
// one `suggestions.generate` job to it, so the job exists exactly when the write committed. The
// job runs a pass for the instance's creator; the jobs of one instance fetched together run one
// pass.
import { z } from 'zod';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { enqueueLater } from '../../platform/jobs/later.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { SuggestionsService } from './suggestions.service.js';

export const GENERATE_JOB = 'suggestions.generate';

export class SuggestionJobs {
  /** The instances each unit of work already enqueued a pass for. */
  private readonly enqueued = new WeakMap<UnitOfWork, Set<string>>();

  constructor(
    private readonly jobs: JobQueue,
    suggestions: SuggestionsService,
  ) {
    jobs.define({
      name: GENERATE_JOB,
      schema: z.object({ instanceId: z.uuid() }),
      retryLimit: 2,
      // A worker waits for its one-second poll (never woken by a write's commit) unless its last
      // fetch came back full, so the writes of the second before (an orchestrator run's nine come
      // within one) meet in one batch; 50 a batch keeps that up to about 100 writes a second over
      // the two workers.
      wakeOnEnqueue: false,
      batchSize: 50,
      localConcurrency: 2,
      // A pass reads the instance as it is: one after the fetch serves every write before it.
      coalesceBy: (data) => data.instanceId,
      handler: (data) => suggestions.generateForInstance(data.instanceId),
    });
  }

  /** The `instanceWritten` flush's subscriber: one job per instance and unit of work, added to
   * the unit (none without a queue: CLI commands). */
  async onInstancesWritten(uow: UnitOfWork, instanceIds: readonly string[]): Promise<void> {
    if (!this.jobs.accepting) return;
    let seen = this.enqueued.get(uow);
    for (const instanceId of instanceIds) {
      if (!seen) this.enqueued.set(uow, (seen = new Set()));
      if (seen.has(instanceId)) continue;
      seen.add(instanceId);
      void enqueueLater(uow, GENERATE_JOB, { instanceId });
    }
  }
}
