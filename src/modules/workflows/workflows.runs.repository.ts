// SQL only: orchestrator runs (their creation, cancellation, options, lease, progress and end)
// and the task runs that claim each task of a run once.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import { instanceColumns, taskColumns, type InstanceRow, type TaskRow } from './workflows.repository.js';
import { finishWrites } from './workflows.orchestrator.rules.js';
import type { RunProgress, RunStatus, RunTrigger } from './workflows.tables.js';

// What a run answers with (the contract's shape); the orchestrator reads its options and lease too.
const runColumns = [
  'id',
  'instance_id',
  'status',
  'trigger',
  'task_ids',
  'progress',
  'error',
  'created_at',
  'finished_at',
] as const;
const fullRunColumns = [
  ...runColumns,
  'run_tasks',
  'concurrency',
  'lease_until',
  'started_at',
  'created_by_user_id',
] as const;

const leaseEnd = (seconds: number) => sql<Date>`now() + make_interval(secs => ${seconds})`;

export function findRun(db: Executor, id: string, lock = false) {
  const q = db.selectFrom('workflow_runs').select(fullRunColumns).where('id', '=', id);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}
export type FullRunRow = NonNullable<Awaited<ReturnType<typeof findRun>>>;

/** An instance's runs, newest first. */
export function listRuns(db: Executor, instanceId: string) {
  return db
    .selectFrom('workflow_runs')
    .select(fullRunColumns)
    .where('instance_id', '=', instanceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function setRunOptions(db: Executor, id: string, o: { runTasks: boolean; concurrency: number }) {
  return db
    .updateTable('workflow_runs')
    .set({ run_tasks: o.runTasks, concurrency: o.concurrency })
    .where('id', '=', id)
    .returning(fullRunColumns)
    .executeTakeFirstOrThrow();
}

/** Takes the run for this worker: running, leased until `seconds` from now. Only a queued or
 * running run whose lease is free or lapsed is taken (the caller holds the row lock). */
export function takeRun(db: Executor, id: string, seconds: number) {
  return db
    .updateTable('workflow_runs')
    .set({
      status: 'running',
      lease_until: leaseEnd(seconds),
      started_at: sql<Date>`coalesce(started_at, now())`,
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
    .returning(fullRunColumns)
    .executeTakeFirst();
}

/** Extends the lease of a running run; undefined when the run is no longer running (canceled). */
export function renewLease(db: Executor, id: string, seconds: number) {
  return db
    .updateTable('workflow_runs')
    .set({ lease_until: leaseEnd(seconds) })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returning('id')
    .executeTakeFirst();
}

/** Frees the lease (this worker stops: another job takes the run up at once). */
export function releaseLease(db: Executor, id: string) {
  return db
    .updateTable('workflow_runs')
    .set({ lease_until: null })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** The tasks the run executes and its total (once, when it first gets there). */
export function setRunTasks(db: Executor, id: string, taskIds: string[]) {
  return db
    .updateTable('workflow_runs')
    .set({
      task_ids: JSON.stringify(taskIds),
      progress: sql`jsonb_set(progress, '{total}', to_jsonb(${taskIds.length}::int))`,
    })
    .where('id', '=', id)
    .returning(fullRunColumns)
    .executeTakeFirstOrThrow();
}

/** Ends a queued or running run (a canceled one stays canceled: undefined). */
export function finishRun(
  db: Executor,
  id: string,
  status: Extract<RunStatus, 'completed' | 'failed'>,
  error: Record<string, unknown> | null,
) {
  return db
    .updateTable('workflow_runs')
    .set({ status, error, finished_at: dbNow(), lease_until: null })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returning(fullRunColumns)
    .executeTakeFirst();
}

/** Unfinished runs that no worker holds: running with a lapsed lease, or queued or released and
 * older than `graceSeconds` (their job may have been lost with a process that died after commit). */
export function orphanedRuns(db: Executor, graceSeconds: number, limit: number) {
  return db
    .selectFrom('workflow_runs')
    .select(['id'])
    .where('status', 'in', ['queued', 'running'])
    .where(sql<boolean>`coalesce(lease_until, created_at + make_interval(secs => ${graceSeconds})) < now()`)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

// ---- task runs -------------------------------------------------------------------------------

/** Tasks row-locked (in id order: two claims of overlapping tasks lock them in one order), each
 * with this run's claim of it (status and artifact; null when there is none), in one read. A
 * task that does not exist is missing from the answer. */
export function lockTasksWithClaims(db: Executor, runId: string, taskIds: string[]) {
  return db
    .selectFrom('workflow_tasks as t')
    .leftJoin('workflow_task_runs as tr', (j) =>
      j.onRef('tr.task_id', '=', 't.id').on('tr.run_id', '=', runId),
    )
    .select(taskColumns.map((c) => `t.${c}` as const))
    .select(['tr.status as claim_status', 'tr.artifact_id as claim_artifact_id'])
    .where('t.id', '=', sql<string>`any(${taskIds}::uuid[])`)
    .orderBy('t.id')
    .forUpdate('t')
    .execute();
}

export interface NewClaim {
  taskId: string;
  personaId: number;
  /** The draft artifact's summary and metadata. */
  summary: string;
  metadata: Record<string, unknown>;
}

/** Claims tasks for a run in one statement: for each, its draft artifact, the claim naming it,
 * and the task in progress (`run_count` + 1). Answers the claimed tasks, each with its artifact
 * id, in the order given; fewer when a claim of one existed (the caller rolls back: its draft
 * artifact is written). The caller holds the tasks' row locks. One statement saves a claim two
 * round trips; it decides nothing (which tasks to claim is the caller's, sortClaims), except that
 * a task already claimed by the run (`on conflict do nothing`) is left out, atomically with the
 * insert that would have claimed it twice. */
export async function claimTasks(db: Executor, runId: string, instanceId: string, claims: NewClaim[]) {
  const r = await sql<TaskRow & { artifact_id: string; n: number }>`
    with c as (
      select * from unnest(
        ${claims.map((c) => c.taskId)}::uuid[],
        ${claims.map((c) => c.personaId)}::int8[],
        ${claims.map((c) => c.summary)}::text[],
        ${claims.map((c) => c.metadata)}::jsonb[]
      ) with ordinality as c (task_id, persona_id, summary, metadata, n)
    ), artifact as (
      insert into workflow_artifacts (instance_id, task_id, persona_id, summary, content, metadata)
      select ${instanceId}::uuid, task_id, persona_id, summary, '', metadata from c order by n
      returning id, task_id, persona_id
    ), claim as (
      insert into workflow_task_runs (run_id, task_id, persona_id, artifact_id)
      select ${runId}::uuid, task_id, persona_id, id from artifact
      on conflict (run_id, task_id) do nothing
      returning task_id, artifact_id
    )
    update workflow_tasks as t
    set status = 'in_progress', run_count = t.run_count + 1, updated_at = now()
    from claim join c on c.task_id = claim.task_id
    where t.id = claim.task_id
    returning ${sql.join(taskColumns.map((col) => sql.ref(`t.${col}`)))}, claim.artifact_id, c.n
  `.execute(db);
  return r.rows.sort((a, b) => a.n - b.n).map(({ n: _, ...row }) => row);
}

export interface TaskFinish {
  taskId: string;
  artifactId: string;
  outcome: { ok: true; content: string } | { ok: false };
  wallMs: number;
  modelMs: number;
}

/** Ends running task runs of one run in one statement, each as `finishWrites` says (the task run
 * and task statuses, the artifact ready with its content or left draft), and counts them in the
 * run's progress. Answers the instance row, whether it was open to the finish and how many ended
 * (fewer than given when some had already ended: the caller rolls back); undefined when the
 * instance does not exist. */
export async function finishTasks(db: Executor, instanceId: string, runId: string, finishes: TaskFinish[]) {
  const writes = finishes.map((f) => finishWrites(f.outcome.ok));
  // One statement, because the check and the writes must be one: the instance is share-locked and
  // read with the run's status first, and only while the run is running and the instance not
  // archived (`open`) is anything written. The run's row needs no lock of its own for that check:
  // its status leaves `running` only under the instance's exclusive lock (the run's end, the
  // instance's completion), which the share lock excludes. Every write waits on `open` (a one-time
  // filter), so the instance's lock is taken before any other row's: the order of the claims and
  // of the run's end, which lock the instance first. Only the task runs still `running` end
  // (`ended`), and the artifacts, tasks and progress follow from those alone, so a finish written
  // twice counts once. The run's row stays locked until the commit: the caller writes one run's
  // finishes one batch at a time.
  const r = await sql<InstanceRow & { run_status: RunStatus | null; open: boolean; ended: number }>`
    with inst as (
      select ${sql.join(instanceColumns.map((col) => sql.ref(`i.${col}`)))},
        (select r.status from workflow_runs as r where r.id = ${runId}::uuid) as run_status
      from workflow_instances as i where i.id = ${instanceId}::uuid
      for share of i
    ), open as (
      select from inst where run_status = 'running' and archived_at is null
    ), f as (
      select * from unnest(
        ${finishes.map((f) => f.taskId)}::uuid[],
        ${finishes.map((f) => f.artifactId)}::uuid[],
        ${writes.map((w) => w.artifactReady)}::boolean[],
        ${finishes.map((f) => (f.outcome.ok ? f.outcome.content : ''))}::text[],
        ${writes.map((w) => w.taskRun)}::text[],
        ${writes.map((w) => w.task)}::text[],
        ${finishes.map((f) => f.wallMs)}::float8[],
        ${finishes.map((f) => f.modelMs)}::float8[]
      ) as f (task_id, artifact_id, artifact_ready, content, task_run_status, task_status, wall_ms, model_ms)
    ), ended as (
      update workflow_task_runs as tr
      set status = f.task_run_status, wall_ms = f.wall_ms, model_ms = f.model_ms, finished_at = now()
      from f
      where exists (select from open)
        and tr.run_id = ${runId}::uuid and tr.task_id = f.task_id and tr.status = 'running'
      returning f.task_id, f.artifact_id, f.artifact_ready, f.content, f.task_run_status, f.task_status
    ), artifact as (
      update workflow_artifacts as a set content = ended.content, status = 'ready'
      from ended where a.id = ended.artifact_id and ended.artifact_ready
    ), task as (
      update workflow_tasks as t set status = ended.task_status, updated_at = now()
      from ended where t.id = ended.task_id
    ), counted as (
      update workflow_runs
      set progress = progress || jsonb_build_object(
        'completed', coalesce((progress ->> 'completed')::int, 0)
          + (select count(*) from ended where task_run_status = 'completed'),
        'failed', coalesce((progress ->> 'failed')::int, 0)
          + (select count(*) from ended where task_run_status = 'failed'))
      where id = ${runId}::uuid and exists (select from ended)
    )
    select inst.*, exists (select from open) as open, (select count(*)::int from ended) as ended
    from inst
  `.execute(db);
  const found = r.rows[0];
  if (!found) return undefined;
  const { run_status: _, open, ended, ...row } = found;
  return { row, open, ended };
}

/** How many tasks of the instance each persona holds (assignment by fewest tasks here). */
export async function tasksPerPersona(db: Executor, instanceId: string): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('workflow_tasks')
    .select(['assigned_persona_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('instance_id', '=', instanceId)
    .where('assigned_persona_id', 'is not', null)
    .groupBy('assigned_persona_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.assigned_persona_id), Number(r.n)]));
}

/** Times of an instance's finished task runs (bench and diagnostics). */
export function taskRunTimes(db: Executor, runIds: string[]) {
  if (runIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('workflow_task_runs')
    .select(['run_id', 'task_id', 'wall_ms', 'model_ms', 'status'])
    .where('run_id', 'in', runIds)
    .execute();
}

export type { RunProgress };

export function findActiveRun(db: Executor, instanceId: string) {
  return db
    .selectFrom('workflow_runs')
    .select(runColumns)
    .where('instance_id', '=', instanceId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
}

export function insertRun(
  db: Executor,
  v: { id: string; instanceId: string; trigger: RunTrigger; taskIds: string[]; userId: number | null },
) {
  return db
    .insertInto('workflow_runs')
    .values({
      id: v.id,
      instance_id: v.instanceId,
      trigger: v.trigger,
      task_ids: JSON.stringify(v.taskIds),
      progress: { total: v.taskIds.length, completed: 0, failed: 0 },
      created_by_user_id: v.userId,
    })
    .returning(runColumns)
    .executeTakeFirstOrThrow();
}
export type RunRow = Awaited<ReturnType<typeof insertRun>>;

/** Cancels the instance's queued or running run, if any. */
export function cancelActiveRuns(db: Executor, instanceId: string) {
  return db
    .updateTable('workflow_runs')
    .set({ status: 'canceled', finished_at: dbNow() })
    .where('instance_id', '=', instanceId)
    .where('status', 'in', ['queued', 'running'])
    .returning('id')
    .execute();
}
