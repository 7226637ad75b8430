// Orchestrator runs as participants see them (contract "Tasks, artifacts, orchestrator"): start one
// (`POST .../orchestrate`, one queued or running run per instance), read one, list an instance's.
// Executing a run is the orchestrator's (workflows.orchestrator.ts), through the job.
import { notFound } from '../../platform/http/problem.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import type { OrchestrateInput } from './workflows.runs.schemas.js';
import type { Run } from './workflows.schemas.js';
import type { InstanceParts } from './workflows.service.js';
import type { RunTrigger, Specialty } from './workflows.tables.js';
import { refuseWhileRunActive, startRunAndEnd, toRun } from './workflows.tasks.js';
import type { WorkflowActor } from './workflows.types.js';

/** A task a run is started with (`orchestrate`'s `addTasks`). */
export interface NewTask {
  title: string;
  description: string;
  specialty: Specialty;
}

export class WorkflowRunsService {
  constructor(private readonly instances: InstanceParts) {}

  private get db() {
    return this.instances.db;
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
    return this.instances.writes.toInstance(actor, instanceId, {}, async (w) => {
      w.checkWritable();
      await refuseWhileRunActive(w);
      if (addTasks.length > 0) {
        const added = await repo.insertTasks(
          w.trx,
          instanceId,
          addTasks.map((t) => ({ ...t, metadata: { addedBy: trigger } })),
        );
        for (const t of added)
          w.record({
            eventType: 'workflow_task_updated',
            eventText: `Task "${t.title}" added (${t.specialty})`,
            metadata: {
              taskId: t.id,
              changed: ['created'],
              fromStatus: null,
              status: t.status,
              source: trigger,
            },
          });
      }
      return toRun(await startRunAndEnd(w, trigger, [], input));
    });
  }

  /** A run of an instance the caller participates in; 404 for anyone else. */
  async get(actor: WorkflowActor, id: string): Promise<Run> {
    const run = await runs.findRun(this.db, id);
    if (!run) throw notFound('run');
    await this.instances.access.participantInstance(this.db, run.instance_id, actor, { missing: 'run' });
    return toRun(run);
  }

  /** The instance's runs, newest first. */
  async list(actor: WorkflowActor, instanceId: string): Promise<Run[]> {
    await this.instances.access.participantInstance(this.db, instanceId, actor);
    return (await runs.listRuns(this.db, instanceId)).map(toRun);
  }
}
