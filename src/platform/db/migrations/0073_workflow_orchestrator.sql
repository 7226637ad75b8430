-- The orchestrator's runs (contract "Tasks, artifacts, orchestrator"). A run's options are stored
-- with it, so a retried or resumed job runs it as it was asked. A worker holds a run by a lease it
-- renews while it works (`lease_until`); a run whose lease lapsed (its worker died) is taken up
-- again by another job. Each task a run executes is claimed once, by the primary key below, with
-- the artifact that claim created: a resumed run finishes that artifact instead of writing
-- another, and never calls the model again for a task it already finished.
alter table workflow_runs add column run_tasks boolean not null default true;
alter table workflow_runs add column concurrency integer not null default 3;
alter table workflow_runs add column lease_until timestamptz;
alter table workflow_runs add column started_at timestamptz;
alter table workflow_runs add constraint workflow_runs_concurrency check (concurrency between 1 and 8);
-- The sweep's search for unfinished runs.
create index workflow_runs_unfinished on workflow_runs (created_at) where status in ('queued', 'running');
create index workflow_runs_instance on workflow_runs (instance_id, created_at desc);

create table workflow_task_runs (
  run_id uuid not null references workflow_runs (id) on delete cascade,
  task_id uuid not null references workflow_tasks (id) on delete cascade,
  artifact_id uuid references workflow_artifacts (id) on delete set null,
  persona_id bigint,
  status text not null default 'running',
  -- Times measured by the orchestrator: the task's whole run, and the model's share of it.
  wall_ms double precision,
  model_ms double precision,
  claimed_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (run_id, task_id),
  constraint workflow_task_runs_status check (status in ('running', 'completed', 'failed', 'skipped'))
);
