import type { CreatedAt, Json, UpdatedAt } from '../../platform/db/schema.js';

export type RunState = 'queued' | 'running' | 'completed' | 'failed';

/** A scheduled task (migration 0096): our row over a pg-boss schedule keyed by its id. */
export interface ScheduledTasksTable {
  id: string;
  name: string;
  kind: string;
  cron: string;
  timezone: string;
  payload: Json;
  enabled: boolean;
  last_job_id: string | null;
  last_state: RunState | null;
  last_started_at: Date | null;
  last_finished_at: Date | null;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    scheduled_tasks: ScheduledTasksTable;
  }
}
