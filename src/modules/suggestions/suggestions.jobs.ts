// The pass after each instance write (contract "Suggestions"): the workflows module tells its port
// `instanceWritten` of every event a write records, inside the write's transaction; the first for
// an instance in that transaction enqueues one `suggestions.generate` job there, so the job exists
// exactly when the write committed. The job runs a pass for the instance's creator; the jobs of one
// instance fetched together run one pass.
import { z } from 'zod';
import type { Executor } from '../../platform/db/database.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { SuggestionsService } from './suggestions.service.js';

export const GENERATE_JOB = 'suggestions.generate';

export class SuggestionJobs {
  /** The instances each open transaction already enqueued a pass for. */
  private readonly enqueued = new WeakMap<Executor, Set<string>>();

  constructor(
    private readonly jobs: JobQueue,
    suggestions: SuggestionsService,
  ) {
    jobs.define({
      name: GENERATE_JOB,
      schema: z.object({ instanceId: z.uuid() }),
      retryLimit: 2,
      // A worker waits for its one-second poll unless its last fetch came back full, so the
      // writes of the second before (an orchestrator run's nine come within one) meet in one
      // batch; 50 a batch keeps that up to about 100 writes a second over the two workers.
      batchSize: 50,
      localConcurrency: 2,
      // A pass reads the instance as it is: one after the fetch serves every write before it.
      coalesceBy: (data) => data.instanceId,
      handler: (data) => suggestions.generateForInstance(data.instanceId),
    });
  }

  /** WorkflowPorts.instanceWritten: one job per instance and transaction (none without a queue:
   * CLI commands). */
  readonly instanceWritten = async (trx: Executor, instanceId: string): Promise<void> => {
    if (!this.jobs.accepting) return;
    if (!trx.isTransaction) return this.enqueue(trx, instanceId);
    let seen = this.enqueued.get(trx);
    if (!seen) this.enqueued.set(trx, (seen = new Set()));
    if (seen.has(instanceId)) return;
    seen.add(instanceId);
    await this.enqueue(trx, instanceId);
  };

  private async enqueue(executor: Executor, instanceId: string): Promise<void> {
    await this.jobs.enqueue(executor, GENERATE_JOB, { instanceId });
  }
}
