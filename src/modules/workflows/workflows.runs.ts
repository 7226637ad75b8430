// Orchestrator runs as participants see them (contract "Tasks, artifacts, orchestrator"): start one
// (`POST .../orchestrate`, one queued or running run per instance), read one, list an instance's.
// Executing a run is the orchestrator's (workflows.orchestrator.ts), through the job.
import { transaction } from '../../platform/db/database.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { AppError, notFound } from '../../platform/http/problem.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import type { OrchestrateInput } from './workflows.runs.schemas.js';
import type { Run } from './workflows.schemas.js';
import type { WorkflowsService } from './workflows.service.js';
import type { RunTrigger, Specialty } from './workflows.tables.js';
import { toRun } from './workflows.tasks.js';
import type { WorkflowActor } from './workflows.types.js';

/** A task a run is started with (`orchestrate`'s `addTasks`). */
export interface NewTask {
  title: string;
  description: string;
  specialty: Specialty;
}

export class WorkflowRunsService {
  constructor(private readonly core: WorkflowsService) {}

  private get db() {
    return this.core.deps.db;
  }

  /** A queued run with these options, handed to the executor after commit; a queued or running
   * run of the instance → 409 `conflict` with `run`. */
  async orchestrate(
    actor: WorkflowActor,
    instanceId: string,
    input: OrchestrateInput,
    trigger: Extract<RunTrigger, 'manual' | 'suggestion' | 'command'> = 'manual',
    /** Tasks added (pending) in the same transaction before the run starts, so it runs them. */
    addTasks: NewTask[] = [],
  ): Promise<Run> {
    return transaction(this.db, async (trx, afterCommit) => {
      const instance = await this.core.participantInstance(trx, instanceId, actor, { lock: true });
      this.core.checkWritable(instance);
      const active = await runs.findActiveRun(trx, instance.id);
      if (active)
        throw new AppError('conflict', 'A run of this instance is queued or running', { run: toRun(active) });
      if (addTasks.length > 0) {
        const added = await repo.insertTasks(
          trx,
          instance.id,
          addTasks.map((t) => ({ ...t, metadata: { addedBy: trigger } })),
        );
        for (const t of added)
          await this.core.entry.record(
            trx,
            afterCommit,
            instance,
            actor.id,
            'workflow_task_updated',
            `Task "${t.title}" added (${t.specialty})`,
            { taskId: t.id, changed: ['created'], fromStatus: null, status: t.status, source: trigger },
          );
      }
      try {
        const { run } = await this.core.entry.startRun(trx, afterCommit, instance, trigger, [], actor.id)
          .done;
        return toRun(await runs.setRunOptions(trx, run.id, input));
      } catch (err) {
        if (isUniqueViolation(err))
          throw new AppError('conflict', 'A run of this instance is queued or running');
        throw err;
      }
    });
  }

  /** A run of an instance the caller participates in; 404 for anyone else. */
  async get(actor: WorkflowActor, id: string): Promise<Run> {
    const run = await runs.findRun(this.db, id);
    if (!run) throw notFound('run');
    await this.core.participantInstance(this.db, run.instance_id, actor).catch((err: unknown) => {
      throw err instanceof AppError && err.code === 'not_found' ? notFound('run') : err;
    });
    return toRun(run);
  }

  /** The instance's runs, newest first. */
  async list(actor: WorkflowActor, instanceId: string): Promise<Run[]> {
    await this.core.participantInstance(this.db, instanceId, actor);
    return (await runs.listRuns(this.db, instanceId)).map(toRun);
  }
}
