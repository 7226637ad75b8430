// SQL only: workflow definitions, instances, approvals, tasks and artifacts (runs: workflows.runs.repository.ts).
import { sql, type Updateable } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import type {
  ReviewStatus,
  Specialty,
  TaskStatus,
  WorkflowArtifactsTable,
  WorkflowInstancesTable,
  WorkflowTasksTable,
} from './workflows.tables.js';

// ---- definitions ---------------------------------------------------------------------------

/** Seeding: inserts unless the id exists (several nodes may start at once; never overwrites). */
export async function insertDefinitionsIfAbsent(db: Executor, defs: WorkflowDefinition[]): Promise<string[]> {
  if (defs.length === 0) return [];
  const rows = await db
    .insertInto('workflow_definitions')
    .values(
      defs.map((def) => ({
        id: def.machineId,
        version: def.version,
        protocol_id: def.protocolId,
        definition: JSON.stringify(def),
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

export async function listDefinitions(db: Executor): Promise<WorkflowDefinition[]> {
  const rows = await db.selectFrom('workflow_definitions').select('definition').orderBy('id').execute();
  return rows.map((r) => r.definition);
}

// ---- instances -----------------------------------------------------------------------------

export const instanceColumns = [
  'id',
  'machine_id',
  'protocol_id',
  'state',
  'context',
  'channel_id',
  'guild_id',
  'created_by_user_id',
  'updated_by_user_id',
  'version',
  'state_visit',
  'state_entered_at',
  'registry_instance_id',
  'active_run_id',
  'archived_at',
  'created_at',
] as const;

export function insertInstance(
  db: Executor,
  v: {
    machineId: string;
    protocolId: string;
    state: string;
    context: Record<string, unknown>;
    channelId: string | null;
    guildId: string | null;
    userId: number;
    registryInstanceId: number | null;
  },
) {
  return db
    .insertInto('workflow_instances')
    .values({
      machine_id: v.machineId,
      protocol_id: v.protocolId,
      state: v.state,
      context: v.context,
      channel_id: v.channelId,
      guild_id: v.guildId,
      created_by_user_id: v.userId,
      updated_by_user_id: v.userId,
      registry_instance_id: v.registryInstanceId,
    })
    .returning(instanceColumns)
    .executeTakeFirstOrThrow();
}

/** One instance; `lock` takes its row lock (read-check-write of a transition, approval, …). */
/** `lock`: true (FOR UPDATE) for a write to the instance or anything of it; 'share' (FOR SHARE) for
 * the orchestrator's task claims and finishes, which exclude those writes (the instance's
 * completion among them) but not each other. */
export function findInstance(db: Executor, id: string, lock: boolean | 'share' = false) {
  const q = db.selectFrom('workflow_instances').select(instanceColumns).where('id', '=', id);
  return (lock === 'share' ? q.forShare() : lock ? q.forUpdate() : q).executeTakeFirst();
}
export type InstanceRow = NonNullable<Awaited<ReturnType<typeof findInstance>>>;

export async function listInstances(
  db: Executor,
  f: {
    createdByUserId?: number | undefined;
    machineId?: string | undefined;
    state?: string | undefined;
    channelId?: string | undefined;
    archived?: boolean | undefined;
    limit: number;
    offset: number;
  },
) {
  let q = db.selectFrom('workflow_instances');
  if (f.createdByUserId !== undefined) q = q.where('created_by_user_id', '=', f.createdByUserId);
  if (f.machineId !== undefined) q = q.where('machine_id', '=', f.machineId);
  if (f.state !== undefined) q = q.where('state', '=', f.state);
  if (f.channelId !== undefined) q = q.where('channel_id', '=', f.channelId);
  if (f.archived !== undefined) q = q.where('archived_at', f.archived ? 'is not' : 'is', null);
  const [rows, total] = await Promise.all([
    q
      .select(instanceColumns)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(f.limit)
      .offset(f.offset)
      .execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Writes the changes and bumps the version (the caller holds the row lock). */
export function updateInstance(
  db: Executor,
  id: string,
  changes: Omit<Updateable<WorkflowInstancesTable>, 'version' | 'updated_at'>,
  nextVisit = false,
) {
  return db
    .updateTable('workflow_instances')
    .set({ ...changes, updated_at: dbNow() })
    .set((eb) => ({
      version: eb('version', '+', 1),
      ...(nextVisit ? { state_visit: eb('state_visit', '+', 1) } : {}),
    }))
    .where('id', '=', id)
    .returning(instanceColumns)
    .executeTakeFirstOrThrow();
}

/** The new state's entry: state, a new visit, its entry time. */
export function enterState(db: Executor, id: string, state: string, userId: number, archive: boolean) {
  return updateInstance(
    db,
    id,
    {
      state,
      state_entered_at: dbNow(),
      updated_by_user_id: userId,
      ...(archive ? { archived_at: dbNow() } : {}),
    },
    true,
  );
}

/** Back to a state and one of its earlier visits (an undone transition; the version bumps). */
export function restoreState(db: Executor, id: string, state: string, visit: number, userId: number) {
  return updateInstance(db, id, {
    state,
    state_visit: visit,
    state_entered_at: dbNow(),
    updated_by_user_id: userId,
  });
}

/** The newest unarchived instance a user created for a channel. */
export function newestUnarchivedInChannel(db: Executor, userId: number, channelId: string) {
  return db
    .selectFrom('workflow_instances')
    .select('id')
    .where('channel_id', '=', channelId)
    .where('created_by_user_id', '=', userId)
    .where('archived_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The instance's active run (no version bump: the run, not the instance, is what changed). */
export function setActiveRun(db: Executor, id: string, runId: string | null) {
  return db
    .updateTable('workflow_instances')
    .set({ active_run_id: runId })
    .where('id', '=', id)
    .returning(instanceColumns)
    .executeTakeFirstOrThrow();
}

// ---- approvals -----------------------------------------------------------------------------

const approvalColumns = [
  'id',
  'instance_id',
  'state',
  'state_visit',
  'approved_by_user_id',
  'approved_by_name',
  'note',
  'created_at',
] as const;

export function insertApproval(
  db: Executor,
  v: {
    id: string;
    instanceId: string;
    state: string;
    stateVisit: number;
    userId: number;
    name: string;
    note: string | null;
  },
) {
  return db
    .insertInto('workflow_approvals')
    .values({
      id: v.id,
      instance_id: v.instanceId,
      state: v.state,
      state_visit: v.stateVisit,
      approved_by_user_id: v.userId,
      approved_by_name: v.name,
      note: v.note,
    })
    .returning(approvalColumns)
    .executeTakeFirstOrThrow();
}
export type ApprovalRow = Awaited<ReturnType<typeof insertApproval>>;

/** Oldest first. */
export function listApprovals(db: Executor, instanceId: string) {
  return db
    .selectFrom('workflow_approvals')
    .select(approvalColumns)
    .where('instance_id', '=', instanceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Approvals per (instance, state, visit) of these instances. */
export function countApprovals(db: Executor, instanceIds: string[]) {
  return db
    .selectFrom('workflow_approvals')
    .select(['instance_id', 'state', 'state_visit', (eb) => eb.fn.countAll<number>().as('n')])
    .where('instance_id', 'in', instanceIds)
    .groupBy(['instance_id', 'state', 'state_visit'])
    .execute();
}

// ---- tasks ---------------------------------------------------------------------------------

export const taskColumns = [
  'id',
  'instance_id',
  'title',
  'description',
  'status',
  'specialty',
  'assigned_persona_id',
  'assigned_human',
  'notes',
  'metadata',
  'run_count',
  'created_at',
] as const;

export function insertTasks(
  db: Executor,
  instanceId: string,
  tasks: {
    title: string;
    description: string;
    specialty: Specialty;
    metadata: Record<string, unknown>;
    assigned_persona_id?: number;
  }[],
) {
  return db
    .insertInto('workflow_tasks')
    .values(tasks.map((t) => ({ instance_id: instanceId, ...t })))
    .returning(taskColumns)
    .execute();
}

export function listTasks(db: Executor, instanceId: string, status?: TaskStatus) {
  let q = db.selectFrom('workflow_tasks').select(taskColumns).where('instance_id', '=', instanceId);
  if (status !== undefined) q = q.where('status', '=', status);
  return q.orderBy('seq').execute();
}

export function findTask(db: Executor, id: string, lock = false) {
  const q = db.selectFrom('workflow_tasks').select(taskColumns).where('id', '=', id);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}
export type TaskRow = NonNullable<Awaited<ReturnType<typeof findTask>>>;

export function updateTask(
  db: Executor,
  id: string,
  changes: Omit<Updateable<WorkflowTasksTable>, 'updated_at'>,
) {
  return db
    .updateTable('workflow_tasks')
    .set({ ...changes, updated_at: dbNow() })
    .where('id', '=', id)
    .returning(taskColumns)
    .executeTakeFirstOrThrow();
}

// ---- artifacts -----------------------------------------------------------------------------

const artifactListColumns = [
  'id',
  'instance_id',
  'task_id',
  'persona_id',
  'summary',
  'status',
  'review_status',
  'reviewed_by_user_id',
  'review_notes',
  'metadata',
  'created_at',
  'reviewed_at',
  'issue',
] as const;
const artifactColumns = [...artifactListColumns, 'content'] as const;

export function insertArtifact(
  db: Executor,
  v: {
    instanceId: string;
    taskId: string | null;
    personaId: number | null;
    summary: string;
    content: string;
    metadata: Record<string, unknown>;
  },
) {
  return db
    .insertInto('workflow_artifacts')
    .values({
      instance_id: v.instanceId,
      task_id: v.taskId,
      persona_id: v.personaId,
      summary: v.summary,
      content: v.content,
      metadata: v.metadata,
    })
    .returning(artifactColumns)
    .executeTakeFirstOrThrow();
}

export function findArtifact(db: Executor, id: string, lock = false) {
  const q = db.selectFrom('workflow_artifacts').select(artifactColumns).where('id', '=', id);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}
export type ArtifactRow = NonNullable<Awaited<ReturnType<typeof findArtifact>>>;

/** Without `content`, oldest first. */
export function listArtifacts(
  db: Executor,
  instanceId: string,
  f: { taskId?: string | undefined; reviewStatus?: ReviewStatus | undefined } = {},
) {
  let q = db
    .selectFrom('workflow_artifacts')
    .select(artifactListColumns)
    .where('instance_id', '=', instanceId);
  if (f.taskId !== undefined) q = q.where('task_id', '=', f.taskId);
  if (f.reviewStatus !== undefined) q = q.where('review_status', '=', f.reviewStatus);
  return q.orderBy('seq').execute();
}
export type ArtifactListRow = Awaited<ReturnType<typeof listArtifacts>>[number];

export function updateArtifact(db: Executor, id: string, changes: Updateable<WorkflowArtifactsTable>) {
  return db
    .updateTable('workflow_artifacts')
    .set(changes)
    .where('id', '=', id)
    .returning(artifactColumns)
    .executeTakeFirstOrThrow();
}

export async function countPendingArtifacts(db: Executor, instanceId: string): Promise<number> {
  const r = await db
    .selectFrom('workflow_artifacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('instance_id', '=', instanceId)
    .where('review_status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The state (and archive time) of the instances with these ids or linked to these registry
 * instances. */
export function statesOf(db: Executor, p: { ids: string[]; registryInstanceIds: number[] }) {
  if (p.ids.length === 0 && p.registryInstanceIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('workflow_instances')
    .select(['id', 'state', 'archived_at'])
    .where((eb) =>
      eb.or([
        eb(sql<string>`id::text`, '=', sql<string>`any(${p.ids}::text[])`),
        eb('registry_instance_id', '=', sql<number>`any(${p.registryInstanceIds}::int8[])`),
      ]),
    )
    .execute();
}
