// The orchestrator's job: `workflows.run` executes one run (pg-boss, retried with backoff), the
// executor the workflows service hands committed runs to, and the sweep that gives a run whose
// worker died, or whose job was lost with a process that died right after commit, a new job.
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { WorkflowOrchestrator } from './workflows.orchestrator.js';
import * as runs from './workflows.runs.repository.js';
import type { RunHandle } from './workflows.types.js';

export const RUN_JOB = 'workflows.run';
const RUN_RETRIES = 5;

export interface RunJobsOptions {
  /** Runs one node executes at once. */
  runsPerNode: number;
  /** A queued or released run without a worker for this long gets a new job. */
  orphanAfterSeconds: number;
  /** How often the sweep looks (worker nodes). */
  sweepEverySeconds: number;
}

export class WorkflowRunJobs {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly jobs: JobQueue,
    private readonly db: Db,
    private readonly orchestrator: WorkflowOrchestrator,
    private readonly log: Logger,
    private readonly opts: RunJobsOptions,
  ) {
    jobs.define({
      name: RUN_JOB,
      schema: z.object({ runId: z.uuid() }),
      retryLimit: RUN_RETRIES,
      retryDelay: 2,
      localConcurrency: opts.runsPerNode,
      // A run enqueued on this node wakes its workers at once (JobQueue.wake); the poll only finds
      // other nodes' runs and retries, so it can be slow, and the idle workers cost little.
      pollingIntervalSeconds: 5,
      handler: (data, ctx) => orchestrator.execute(data.runId, { final: ctx.retryCount >= RUN_RETRIES }),
    });
  }

  /** WorkflowPorts.runExecutor: a committed run gets its job. Should the enqueue fail (or the
   * process die first), the sweep gives the run one later. */
  readonly executor = (run: RunHandle): void => {
    void this.enqueue(run.id).catch((err: unknown) =>
      this.log.warn({ err, runId: run.id }, 'run job not enqueued; the sweep will retry'),
    );
  };

  private enqueue(runId: string, singletonSeconds?: number) {
    return this.jobs.enqueue(
      this.db,
      RUN_JOB,
      { runId },
      singletonSeconds ? { singletonKey: `run:${runId}`, singletonSeconds } : {},
    );
  }

  /** Gives every orphaned run a job (at most one per run per sweep window). */
  async sweep(): Promise<number> {
    const orphans = await runs.orphanedRuns(this.db, this.opts.orphanAfterSeconds, 100);
    for (const r of orphans) await this.enqueue(r.id, this.opts.sweepEverySeconds);
    if (orphans.length) this.log.info({ runs: orphans.length }, 'orphaned workflow runs resumed');
    return orphans.length;
  }

  /** Worker nodes: the sweep now and then every `sweepEverySeconds`. */
  async start(): Promise<void> {
    await this.sweep();
    this.timer = setInterval(
      () => void this.sweep().catch((err: unknown) => this.log.warn({ err }, 'workflow run sweep failed')),
      this.opts.sweepEverySeconds * 1000,
    );
    this.timer.unref();
  }

  /** Stops the sweep and this node's runs (their jobs are retried), before the queue stops. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.orchestrator.stop();
  }
}
