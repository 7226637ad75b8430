-- Scheduled tasks (contract: "Admin zones"): our rows over pg-boss schedules (the schedule's key is
-- the task's id). The last run is written by the run itself.
create table scheduled_tasks (
  id uuid primary key,
  name text not null,
  kind text not null,
  cron text not null,
  timezone text not null default 'UTC',
  payload jsonb not null default '{}',
  enabled boolean not null default true,
  last_job_id uuid,
  last_state text,
  last_started_at timestamptz,
  last_finished_at timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint scheduled_tasks_name check (length(name) between 1 and 200),
  constraint scheduled_tasks_last_state check (last_state in ('queued', 'running', 'completed', 'failed'))
);
create index scheduled_tasks_created on scheduled_tasks (created_at, id);
