// The pass after each instance write (contract "Suggestions"): every workflow write records its
// timeline events, and the bus publishes them once the write committed; the instances they name
// are gathered for the rest of that turn of the event loop, then each gets one
// `suggestions.generate` job, which runs a pass for the instance's creator. A job lost with a
// process that died right after the commit costs nothing lasting: the next GET runs a pass too.
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { EventBus } from '../../platform/events/bus.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { SuggestionsService } from './suggestions.service.js';

export const GENERATE_JOB = 'suggestions.generate';

export class SuggestionJobs {
  private readonly pending = new Set<string>();
  private scheduled = false;

  constructor(
    private readonly jobs: JobQueue,
    private readonly db: Db,
    bus: EventBus,
    suggestions: SuggestionsService,
    private readonly log: Logger,
  ) {
    jobs.define({
      name: GENERATE_JOB,
      schema: z.object({ instanceId: z.uuid() }),
      retryLimit: 2,
      batchSize: 10,
      localConcurrency: 2,
      handler: (data) => suggestions.generateForInstance(data.instanceId),
    });
    bus.on('timeline.recorded', (event) => {
      const id = event.metadata.stateMachineInstanceId;
      if (typeof id === 'string') this.written(id);
    });
  }

  private written(instanceId: string): void {
    this.pending.add(instanceId);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const ids = [...this.pending];
    this.pending.clear();
    for (const instanceId of ids)
      this.jobs
        .enqueue(this.db, GENERATE_JOB, { instanceId })
        .catch((err: unknown) => this.log.warn({ err, instanceId }, 'suggestion pass not enqueued'));
  }
}
