// Tasks and artifacts of a workflow instance (contract "Tasks, artifacts, orchestrator"): the
// allowed task moves, edits and reruns; artifacts inserted draft, ready once written, reviewed
// once, the last approving review recording evidence (which may advance the instance). The
// orchestrator (built beside this) creates tasks and artifacts through the seams below.
import { dbNow, type Executor, together, transaction } from '../../platform/db/database.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import { taskMoveAllowed } from './workflows.rules.js';
import { TASK_MOVES } from './workflows.tables.js';
import type { Advanced, Artifact, PutTaskInput, Run, Task, WorkflowInstance } from './workflows.schemas.js';
import type { InstanceParts, InstanceRead } from './workflows.service.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import type { WorkflowActor } from './workflows.types.js';
import type { ReviewStatus, RunTrigger, Specialty, TaskStatus } from './workflows.tables.js';
import { toView } from './workflows.views.js';
import type { WorkflowWrite } from './workflows.write.js';

const iso = (d: Date) => d.toISOString();

export function toTask(r: repo.TaskRow): Task {
  return {
    id: r.id,
    instanceId: r.instance_id,
    title: r.title,
    description: r.description,
    status: r.status,
    specialty: r.specialty,
    assignedPersonaId: r.assigned_persona_id,
    assignedHuman: r.assigned_human,
    notes: r.notes,
    metadata: r.metadata,
    runCount: r.run_count,
    createdAt: iso(r.created_at),
  };
}

type ArtifactListRow = Omit<repo.ArtifactRow, 'content'> & { content?: string };

export function toArtifact(r: ArtifactListRow): Artifact {
  return {
    id: r.id,
    instanceId: r.instance_id,
    taskId: r.task_id,
    personaId: r.persona_id,
    summary: r.summary,
    ...(r.content !== undefined ? { content: r.content } : {}),
    status: r.status,
    reviewStatus: r.review_status,
    reviewedByUserId: r.reviewed_by_user_id,
    reviewNotes: r.review_notes,
    metadata: r.metadata,
    createdAt: iso(r.created_at),
    reviewedAt: r.reviewed_at ? iso(r.reviewed_at) : null,
    issue: r.issue,
  };
}

export function toRun(r: runs.RunRow): Run {
  return {
    id: r.id,
    instanceId: r.instance_id,
    status: r.status,
    trigger: r.trigger,
    taskIds: r.task_ids,
    progress: r.progress,
    error: r.error,
    createdAt: iso(r.created_at),
    finishedAt: r.finished_at ? iso(r.finished_at) : null,
  };
}

export interface InstanceOverview {
  instance: WorkflowInstance;
  definition: WorkflowDefinition;
  /** Whether the actor may give an approval the instance waits for (an exit guarded by
   * `observerApproval`, not yet satisfied): an admin or the owner of the instance's observer. False
   * while it waits for none. */
  approver: boolean;
  tasks: Task[];
  artifacts: Artifact[];
}

export class WorkflowTasksService {
  constructor(private readonly instances: InstanceParts) {}

  private get db() {
    return this.instances.db;
  }

  /** An instance as a participant sees it (404 for anyone else), with its definition, tasks,
   * artifacts (without content) and whether the actor may give the approval it waits for: what
   * the suggestions module reads of an instance in one call. Given the instance's id, or a read of
   * it already made (`readForCreator`), which is not read again. */
  async overview(actor: WorkflowActor, idOrRead: string | InstanceRead): Promise<InstanceOverview> {
    const { access, views, definitions } = this.instances;
    const row = typeof idOrRead === 'string' ? await repo.findInstance(this.db, idOrRead) : idOrRead.row;
    if (!row) throw notFound('workflow instance');
    // Admins and the creator take part whoever owns the instance's observer (participantInstance),
    // so for them the owner is read only when an approval is awaited; anyone else takes part only
    // as that owner, checked before anything else is read.
    const checked =
      actor.admin || row.created_by_user_id === actor.id
        ? undefined
        : await access.accessTo(this.db, row, actor);
    const [instance, definition, tasks, artifacts] = await Promise.all([
      views.view(this.db, row),
      definitions.get(row.machine_id),
      repo.listTasks(this.db, row.id),
      repo.listArtifacts(this.db, row.id),
    ]);
    const awaited = instance.allowedTransitions.some((t) => t.guard === 'observerApproval' && !t.satisfied);
    return {
      instance,
      definition,
      approver: awaited && (checked ?? (await access.accessTo(this.db, row, actor))).approver,
      tasks: tasks.map(toTask),
      artifacts: artifacts.map(toArtifact),
    };
  }

  // ---- tasks -------------------------------------------------------------------------------

  async listTasks(actor: WorkflowActor, instanceId: string, status?: TaskStatus): Promise<Task[]> {
    await this.instances.access.participantInstance(this.db, instanceId, actor);
    return (await repo.listTasks(this.db, instanceId, status)).map(toTask);
  }

  /** A write to the instance of a task a participant names (404 for anyone else): the instance
   * row-locked, then the task row (one lock order for every task write). */
  private async taskWrite(uow: UnitOfWork, taskId: string, actor: WorkflowActor) {
    const { trx } = uow;
    const found = await repo.findTask(trx, taskId);
    if (!found) throw notFound('task');
    const instance = await this.instances.access.participantInstance(trx, found.instance_id, actor, {
      lock: true,
      missing: 'task',
    });
    const w = await this.instances.writes.begin(uow, instance, actor);
    w.checkWritable();
    return { w, task: (await repo.findTask(trx, taskId, true))! };
  }

  async putTask(actor: WorkflowActor, taskId: string, input: PutTaskInput): Promise<Task> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const { w, task } = await this.taskWrite(uow, taskId, actor);
      if (input.status !== undefined && !taskMoveAllowed(task.status, input.status))
        throw new AppError(
          'invalid_transition',
          `A task cannot move from ${task.status} to ${input.status}; from ${task.status} it may move to ${TASK_MOVES[task.status].join(', ')}`,
          { from: task.status, to: input.status, allowed: [...TASK_MOVES[task.status]] },
        );
      const persona = input.assignedPersonaId;
      if (persona !== undefined && persona !== null && !(await this.instances.isCharacter(persona, trx)))
        throw validationFailed([{ path: 'assignedPersonaId', message: `user ${persona} is no character` }]);
      const updated = await repo.updateTask(trx, taskId, taskChanges(input));
      const changed = Object.keys(input).filter((k) => input[k as keyof PutTaskInput] !== undefined);
      const moved = updated.status !== task.status ? `: ${task.status} → ${updated.status}` : '';
      w.record({
        eventType: 'workflow_task_updated',
        eventText: `Task "${updated.title}" updated (${changed.join(', ') || 'no change'})${moved}`,
        metadata: { taskId, changed, fromStatus: task.status, status: updated.status },
      });
      await w.end();
      return toTask(updated);
    });
  }

  /** A run of this task alone (old artifacts stay); refused while the task runs or a run is active. */
  async rerun(actor: WorkflowActor, taskId: string): Promise<Run> {
    return transaction(this.db, async (uow) => {
      const { w, task } = await this.taskWrite(uow, taskId, actor);
      if (task.status === 'in_progress')
        throw new AppError('conflict', 'The task is in progress; it cannot rerun now');
      await refuseWhileRunActive(w);
      return toRun(await startRunAndEnd(w, 'rerun', [taskId]));
    });
  }

  // ---- artifacts ---------------------------------------------------------------------------

  async listArtifacts(
    actor: WorkflowActor,
    instanceId: string,
    f: { taskId?: string | undefined; reviewStatus?: ReviewStatus | undefined },
  ): Promise<Artifact[]> {
    await this.instances.access.participantInstance(this.db, instanceId, actor);
    return (await repo.listArtifacts(this.db, instanceId, f)).map(toArtifact);
  }

  async getArtifact(actor: WorkflowActor, id: string): Promise<Artifact> {
    const row = await repo.findArtifact(this.db, id);
    if (!row) throw notFound('artifact');
    await this.instances.access.participantInstance(this.db, row.instance_id, actor, { missing: 'artifact' });
    return toArtifact(row);
  }

  /** Only a `ready` artifact still `pending` is reviewed (once). An approval leaving no artifact of
   * the instance pending records evidence (`source: "artifact_review"`), which may advance it. */
  async review(
    actor: WorkflowActor,
    id: string,
    input: { approve: boolean; notes?: string | undefined },
  ): Promise<{ artifact: Artifact; instance: WorkflowInstance; advanced: Advanced }> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const found = await repo.findArtifact(trx, id);
      if (!found) throw notFound('artifact');
      const { access, writes, views } = this.instances;
      const instance = await access.participantInstance(trx, found.instance_id, actor, {
        lock: true,
        missing: 'artifact',
      });
      const w = await writes.begin(uow, instance, actor);
      w.checkWritable();
      const artifact = (await repo.findArtifact(trx, id, true))!;
      if (artifact.status !== 'ready' || artifact.review_status !== 'pending')
        throw new AppError(
          'conflict',
          artifact.status !== 'ready'
            ? 'The artifact is still a draft; only a ready artifact is reviewed'
            : `The artifact was already reviewed (${artifact.review_status})`,
        );
      const reviewed = await repo.updateArtifact(trx, id, {
        review_status: input.approve ? 'approved' : 'rejected',
        reviewed_by_user_id: actor.id,
        review_notes: input.notes ?? null,
        reviewed_at: dbNow(),
      });
      w.record({
        eventType: 'workflow_artifact_reviewed',
        eventText: `Artifact "${reviewed.summary}" ${input.approve ? 'approved' : 'rejected'}`,
        metadata: {
          artifactId: id,
          taskId: reviewed.task_id,
          approve: input.approve,
          notes: input.notes ?? null,
        },
      });
      if (input.approve && (await repo.countPendingArtifacts(trx, instance.id)) === 0) {
        const { advanced, row } = await this.recordReviewsComplete(w);
        return { artifact: toArtifact(reviewed), instance: row, advanced };
      }
      // The review's event and the instance's view are independent: made at once.
      const [, view] = await together([w.end(), views.view(trx, instance)]);
      return { artifact: toArtifact(reviewed), instance: view, advanced: null };
    });
  }

  /** The review that left no artifact pending: the evidence it completes, recorded after the
   * review's event, which may advance the instance; ends the write. */
  private async recordReviewsComplete(w: WorkflowWrite) {
    const approved = await repo.listArtifacts(w.trx, w.row.id, { reviewStatus: 'approved' });
    w.recordEvidence({
      description: `Every artifact of the instance is reviewed; ${approved.length} approved`,
      proofUrl: null,
      source: 'artifact_review',
      artifactIds: approved.map((a) => a.id),
    });
    const { advanced, records } = await w.advanceIfGuardHolds('evidence');
    const { row } = await w.end();
    return { advanced, row: toView(row, w.def, records) };
  }

  // ---- seams for the orchestrator -------------------------------------------------------------

  /** Seeds tasks (pending; unassigned unless `assignedPersonaId`) in the caller's transaction. */
  async createTasks(
    trx: Executor,
    instanceId: string,
    tasks: {
      title: string;
      description?: string | undefined;
      specialty?: Specialty | undefined;
      metadata?: Record<string, unknown>;
      assignedPersonaId?: number | undefined;
    }[],
  ): Promise<Task[]> {
    if (tasks.length === 0) return [];
    const rows = await repo.insertTasks(
      trx,
      instanceId,
      tasks.map((t) => ({
        title: t.title,
        description: t.description ?? '',
        specialty: t.specialty ?? 'general',
        metadata: t.metadata ?? {},
        ...(t.assignedPersonaId !== undefined ? { assigned_persona_id: t.assignedPersonaId } : {}),
      })),
    );
    return rows.map(toTask);
  }

  /** An artifact as a task's run starts writing it: `draft`, review `pending`. */
  async createDraftArtifact(
    trx: Executor,
    v: {
      instanceId: string;
      taskId: string | null;
      personaId: number | null;
      summary: string;
      metadata?: Record<string, unknown>;
    },
  ): Promise<Artifact> {
    return toArtifact(await repo.insertArtifact(trx, { ...v, content: '', metadata: v.metadata ?? {} }));
  }

  /** The written artifact: its content, and `ready` (a failed call leaves it draft). */
  async markArtifactReady(trx: Executor, id: string, content: string, summary?: string): Promise<Artifact> {
    return toArtifact(
      await repo.updateArtifact(trx, id, {
        content,
        status: 'ready',
        ...(summary !== undefined ? { summary } : {}),
      }),
    );
  }
}

/** 409 `conflict` (with the run) while a run of the write's instance is queued or running. */
export async function refuseWhileRunActive(w: WorkflowWrite): Promise<void> {
  const active = await runs.findActiveRun(w.trx, w.row.id);
  if (active)
    throw new AppError('conflict', 'A run of this instance is queued or running', { run: toRun(active) });
}

/** Starts a queued run of the write's instance (with its options, when given) and ends the
 * write; answers the run. A race with another run's start is decided by the partial unique
 * index: 409 `conflict`. */
export async function startRunAndEnd(
  w: WorkflowWrite,
  trigger: RunTrigger,
  taskIds: string[],
  options?: { runTasks: boolean; concurrency: number },
): Promise<runs.RunRow> {
  const { id, inserted } = w.startRun(trigger, taskIds);
  // Made behind the insert, without waiting for its answer.
  const configured = options && w.send(runs.setRunOptions(w.trx, id, options));
  try {
    await w.end();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', 'A run of this instance is queued or running');
    throw err;
  }
  return configured ? await configured : await inserted;
}

/** A task's changes as its row's columns. */
function taskChanges(input: PutTaskInput) {
  return {
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.assignedPersonaId !== undefined ? { assigned_persona_id: input.assignedPersonaId } : {}),
    ...(input.assignedHuman !== undefined ? { assigned_human: input.assignedHuman || null } : {}),
    ...(input.notes !== undefined ? { notes: input.notes } : {}),
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
  };
}
