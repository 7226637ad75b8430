// A run's task claims and finishes, each a workflow write of the orchestrator (no actor). A claim
// is a `workflow_task_runs` row (primary key run + task), a draft artifact and the task
// `in_progress`, written by one statement; a finish writes the task run, the artifact, the task
// and the run's progress by one statement, and only while the run is running and the instance
// open (runs repository: claimTasks, finishTasks). Both share-lock the instance: its own writes
// (its completion among them) wait for them, the run's other claims and finishes do not.
import type { Logger } from 'pino';
import { transaction } from '../../platform/db/database.js';
import { toProblem } from '../../platform/http/problem.js';
import type { AnsweredCall, Claimed, StartCalls } from './workflows.orchestrator.calls.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import type { InstanceParts } from './workflows.service.js';
import type { WorkflowWrite, WriteEvent } from './workflows.write.js';

/** Another claim of the task came first (its draft artifact is rolled back). */
export class ClaimTaken extends Error {}

/** Another worker finished the task first (the finish's events are rolled back). */
export class TaskFinishedElsewhere extends Error {}

/** Tasks of a run to claim: `started` when the claim began, `start` given the claims written. */
export interface ClaimRequest {
  run: runs.FullRunRow;
  instance: repo.InstanceRow;
  started: number;
  start: StartCalls;
}

type ClaimableTask = Pick<repo.TaskRow, 'id' | 'title' | 'status' | 'specialty' | 'assigned_persona_id'>;

/** Claims these runnable, unclaimed tasks (their locks held, or just created) for the run, on the
 * write: each its draft artifact and claim, the task in progress, and the event that says so. */
export async function writeClaims(
  w: WorkflowWrite,
  run: runs.FullRunRow,
  tasks: ClaimableTask[],
): Promise<Claimed[]> {
  if (tasks.length === 0) return [];
  // Under the tasks' locks no other claim of them can come between the caller's read and this
  // write; if one did, the draft artifacts are rolled back with the rest.
  const written = await runs.claimTasks(
    w.trx,
    run.id,
    w.row.id,
    tasks.map((t) => ({
      taskId: t.id,
      personaId: t.assigned_persona_id!,
      summary: t.title,
      metadata: { runId: run.id, specialty: t.specialty },
    })),
  );
  if (written.length < tasks.length) throw new ClaimTaken();
  for (const t of tasks)
    w.record({
      eventType: 'workflow_task_updated',
      eventText: `Task "${t.title}" started: ${t.status} → in_progress`,
      metadata: {
        taskId: t.id,
        changed: ['status'],
        fromStatus: t.status,
        status: 'in_progress',
        runId: run.id,
      },
    });
  return written.map(({ artifact_id: artifactId, ...task }) => ({ task, artifactId }));
}

/** The claims of these tasks for the run, in their order, in one transaction (each handed to
 * `start` once written): each created with its draft artifact, or the one an interrupted
 * attempt left running; a task done or not runnable has none. Throws ClaimTaken when another
 * claim of one of them came first. */
export function claimTogether(
  instances: InstanceParts,
  { run, instance, started, start }: ClaimRequest,
  taskIds: string[],
): Promise<Claimed[]> {
  return transaction(instances.db, async (uow) => {
    const { trx } = uow;
    // A share lock: the instance's writes (its completion among them) wait for the claim, but
    // the claims and finishes of the run's other tasks do not (none of them writes the
    // instance's row). The tasks' own row locks order claims of one task.
    const row = (await repo.findInstance(trx, instance.id, 'share'))!;
    const locked = await runs.lockTasksWithClaims(trx, run.id, taskIds);
    const { resumed, fresh } = sortClaims(run, row, taskIds, locked);
    const w = await instances.writes.begin(uow, row, null);
    const claimed = new Map((await writeClaims(w, run, fresh)).map((c) => [c.task.id, c] as const));
    const all = taskIds.flatMap((id) => resumed.get(id) ?? claimed.get(id) ?? []);
    start(all, started);
    await w.end();
    return all;
  });
}

/** Of the tasks locked for a claim, in the order of `taskIds`: those this run claimed already and
 * whose claim still runs (an interrupted attempt: resumed with its artifact), and those to claim
 * now (not claimed by this run, assigned, and runnable: pending, or for a rerun anything but in
 * progress). */
export function sortClaims(
  run: Pick<runs.FullRunRow, 'trigger'>,
  instance: Pick<repo.InstanceRow, 'archived_at'>,
  taskIds: string[],
  locked: Awaited<ReturnType<typeof runs.lockTasksWithClaims>>,
): { resumed: Map<string, Claimed>; fresh: repo.TaskRow[] } {
  const byId = new Map(locked.map((t) => [t.id, t] as const));
  const resumed = new Map<string, Claimed>();
  const fresh: repo.TaskRow[] = [];
  for (const id of taskIds) {
    const found = byId.get(id);
    if (!found) continue;
    const { claim_status, claim_artifact_id, ...task } = found;
    if (claim_status !== null) {
      if (claim_status === 'running' && claim_artifact_id !== null)
        resumed.set(id, { task, artifactId: claim_artifact_id });
      continue;
    }
    if (instance.archived_at !== null || task.assigned_persona_id === null) continue;
    const runnable = run.trigger === 'rerun' ? task.status !== 'in_progress' : task.status === 'pending';
    if (runnable) fresh.push(task);
  }
  return { resumed, fresh };
}

/** Answered tasks, in one transaction: each artifact ready and its task completed, or the task
 * blocked (the artifact stays draft); the run's progress counts them. Nothing is written when the
 * run is no longer running. Throws TaskFinishedElsewhere when another worker finished one of
 * them first (nothing of this batch is kept). */
export async function finishTogether(
  instances: InstanceParts,
  run: runs.FullRunRow,
  instance: repo.InstanceRow,
  answered: AnsweredCall[],
  log: Logger,
): Promise<void> {
  await transaction(instances.db, async (uow) => {
    const { trx } = uow;
    // A task's time runs to here, its finish's wait for a connection included (the finish's
    // one writing statement below is left out: the time is written by it).
    const now = performance.now();
    const written = await runs.finishTasks(
      trx,
      instance.id,
      run.id,
      answered.map((a) => ({
        taskId: a.claimed.task.id,
        artifactId: a.claimed.artifactId,
        outcome: a.ok ? { ok: true, content: a.content } : { ok: false },
        wallMs: now - a.started,
        modelMs: a.modelMs,
      })),
    );
    if (!written?.open) return;
    if (written.ended < answered.length) throw new TaskFinishedElsewhere();
    const w = await instances.writes.begin(uow, written.row, null);
    for (const a of answered) w.record(finishEvent(a, run.id, log));
    await w.end();
  });
}

/** A finished task's event: completed with its artifact ready, or failed and blocked (an
 * unexpected error logged). */
function finishEvent(a: AnsweredCall, runId: string, log: Logger): WriteEvent {
  const { task, artifactId } = a.claimed;
  const common = { taskId: task.id, artifactId, personaId: task.assigned_persona_id, runId };
  if (a.ok)
    return {
      eventType: 'workflow_task_completed',
      eventText: `Task "${task.title}" completed; artifact ready`,
      metadata: common,
    };
  const problem = toProblem(a.err);
  if (problem.code === 'internal') log.error({ err: a.err, runId }, 'workflow task failed');
  return {
    eventType: 'workflow_task_failed',
    eventText: `Task "${task.title}" failed and is blocked: ${problem.detail ?? problem.title}`,
    metadata: { ...common, error: { code: problem.code, detail: problem.detail ?? null } },
  };
}
