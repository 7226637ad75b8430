// SQL only: scheduled tasks.
import { dbNow, type Executor } from '../../platform/db/database.js';

const columns = [
  'id',
  'name',
  'kind',
  'cron',
  'timezone',
  'payload',
  'enabled',
  'last_job_id',
  'last_state',
  'last_started_at',
  'last_finished_at',
  'last_error',
  'created_at',
  'updated_at',
] as const;

export function find(db: Executor, id: string) {
  return db.selectFrom('scheduled_tasks').select(columns).where('id', '=', id).executeTakeFirst();
}
export type TaskRow = NonNullable<Awaited<ReturnType<typeof find>>>;

export function list(db: Executor) {
  return db.selectFrom('scheduled_tasks').select(columns).orderBy('created_at').orderBy('id').execute();
}

export function insert(
  db: Executor,
  v: {
    id: string;
    name: string;
    kind: string;
    cron: string;
    timezone: string;
    payload: object;
    enabled: boolean;
  },
) {
  return db
    .insertInto('scheduled_tasks')
    .values({ ...v, payload: JSON.stringify(v.payload) })
    .returning(columns)
    .executeTakeFirstOrThrow();
}

export function update(
  db: Executor,
  id: string,
  v: { name?: string; cron?: string; timezone?: string; payload?: object; enabled?: boolean },
) {
  const { payload, ...rest } = v;
  return db
    .updateTable('scheduled_tasks')
    .set({
      ...rest,
      ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
      updated_at: dbNow(),
    })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
}

export async function remove(db: Executor, id: string): Promise<boolean> {
  const r = await db.deleteFrom('scheduled_tasks').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export function lock(db: Executor, id: string) {
  return db.selectFrom('scheduled_tasks').select(columns).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** A run-now job, queued in the same transaction as the job itself. */
export function noteQueued(db: Executor, id: string, jobId: string) {
  return db
    .updateTable('scheduled_tasks')
    .set({
      last_job_id: jobId,
      last_state: 'queued',
      last_started_at: null,
      last_finished_at: null,
      last_error: null,
    })
    .where('id', '=', id)
    .execute();
}

export function noteRunning(db: Executor, id: string, jobId: string) {
  return db
    .updateTable('scheduled_tasks')
    .set({
      last_job_id: jobId,
      last_state: 'running',
      last_started_at: dbNow(),
      last_finished_at: null,
      last_error: null,
    })
    .where('id', '=', id)
    .execute();
}

/** The end of a run, unless a later run has started meanwhile. */
export function noteFinished(
  db: Executor,
  id: string,
  jobId: string,
  state: 'completed' | 'failed',
  error: string | null,
) {
  return db
    .updateTable('scheduled_tasks')
    .set({ last_state: state, last_finished_at: dbNow(), last_error: error })
    .where('id', '=', id)
    .where('last_job_id', '=', jobId)
    .execute();
}
