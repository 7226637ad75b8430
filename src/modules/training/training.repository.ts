// SQL only: training jobs and by-heart texts.
import { dbNow, type Executor } from '../../platform/db/database.js';
import type {
  TrainingJobKind,
  TrainingJobStage,
  TrainingJobStatus,
  TrainingJobsTable,
} from './training.tables.js';

const jobColumns = [
  'id',
  'kind',
  'npc_user_id',
  'created_by',
  'file_name',
  'mime_type',
  'title',
  'languages',
  'status',
  'stage',
  'progress',
  'memory_ids',
  'truncated',
  'offline',
  'error',
  'created_at',
  'updated_at',
] as const;

export type JobRow = Omit<TrainingJobsTable, 'data' | 'languages' | 'memory_ids' | 'error'> & {
  languages: string[];
  memory_ids: number[];
  error: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
};

export interface NewJob {
  id: string;
  kind: TrainingJobKind;
  npcUserId: number;
  createdBy: number;
  fileName: string;
  mimeType: string;
  title: string | null;
  languages: string[];
  offline: boolean;
  data: Buffer;
}

export async function insertJob(db: Executor, j: NewJob): Promise<JobRow> {
  return (await db
    .insertInto('training_jobs')
    .values({
      id: j.id,
      kind: j.kind,
      npc_user_id: j.npcUserId,
      created_by: j.createdBy,
      file_name: j.fileName,
      mime_type: j.mimeType,
      title: j.title,
      languages: JSON.stringify(j.languages),
      status: 'queued',
      stage: 'queued',
      progress: 0,
      truncated: false,
      offline: j.offline,
      data: j.data,
    })
    .returning(jobColumns)
    .executeTakeFirstOrThrow()) as JobRow;
}

export async function findJob(db: Executor, id: string): Promise<JobRow | undefined> {
  return (await db.selectFrom('training_jobs').select(jobColumns).where('id', '=', id).executeTakeFirst()) as
    JobRow | undefined;
}

/** The job with its file (the worker's read). */
export async function findJobWithData(
  db: Executor,
  id: string,
): Promise<(JobRow & { data: Buffer | null }) | undefined> {
  return (await db
    .selectFrom('training_jobs')
    .select([...jobColumns, 'data'])
    .where('id', '=', id)
    .executeTakeFirst()) as (JobRow & { data: Buffer | null }) | undefined;
}

/** The job's status under a row lock (the storing transaction's guard against a second run). */
export async function lockJobStatus(db: Executor, id: string): Promise<TrainingJobStatus | undefined> {
  const r = await db
    .selectFrom('training_jobs')
    .select('status')
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return r?.status;
}

export async function listJobs(
  db: Executor,
  q: { status?: TrainingJobStatus | undefined; limit: number },
): Promise<JobRow[]> {
  let query = db.selectFrom('training_jobs').select(jobColumns);
  if (q.status) query = query.where('status', '=', q.status);
  return (await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit)
    .execute()) as JobRow[];
}

export interface JobChange {
  status?: TrainingJobStatus;
  stage?: TrainingJobStage;
  progress?: number;
  truncated?: boolean;
  offline?: boolean;
  memoryIds?: number[];
  error?: Record<string, unknown> | null;
  /** The job ended: its file is no longer kept. */
  dropData?: boolean;
}

/** Applies a change to an unfinished job; answers the row, or nothing when the job has ended (a
 * second run of a finished job changes nothing). */
export async function updateJob(db: Executor, id: string, c: JobChange): Promise<JobRow | undefined> {
  return (await db
    .updateTable('training_jobs')
    .set({
      ...(c.status !== undefined ? { status: c.status } : {}),
      ...(c.stage !== undefined ? { stage: c.stage } : {}),
      ...(c.progress !== undefined ? { progress: c.progress } : {}),
      ...(c.truncated !== undefined ? { truncated: c.truncated } : {}),
      ...(c.offline !== undefined ? { offline: c.offline } : {}),
      ...(c.memoryIds !== undefined ? { memory_ids: JSON.stringify(c.memoryIds) } : {}),
      ...(c.error !== undefined ? { error: c.error === null ? null : JSON.stringify(c.error) } : {}),
      ...(c.dropData ? { data: null } : {}),
      updated_at: dbNow(),
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returning(jobColumns)
    .executeTakeFirst()) as JobRow | undefined;
}

export function insertByHeart(
  db: Executor,
  v: { id: string; npcUserId: number; createdBy: number; title: string; memoryIds: number[] },
) {
  return db
    .insertInto('training_by_heart')
    .values({
      id: v.id,
      npc_user_id: v.npcUserId,
      created_by: v.createdBy,
      title: v.title,
      parts: v.memoryIds.length,
      memory_ids: JSON.stringify(v.memoryIds),
    })
    .execute();
}

export function findByHeart(db: Executor, id: string) {
  return db
    .selectFrom('training_by_heart')
    .select(['id', 'npc_user_id', 'title', 'parts', 'memory_ids'])
    .where('id', '=', id)
    .executeTakeFirst();
}
