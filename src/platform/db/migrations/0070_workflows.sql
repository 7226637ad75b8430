-- Workflow state machines (spec "State machine instance", "Task", "Artifact", "Approval and
-- evidence"). Definitions are stored, never edited: a change is a new id (`_v2`). An instance keeps
-- its machine id, so its version. Evidence is a timeline event (`verification_evidence`), found by
-- the index on its `metadata.stateMachineInstanceId` below.

create table workflow_definitions (
  id text primary key,
  version integer not null,
  protocol_id text not null references protocols (id),
  definition jsonb not null,
  created_at timestamptz not null default now(),
  constraint workflow_definitions_id_versioned check (id ~ '^[a-z][a-z0-9_]*_v[1-9][0-9]*$')
);

create table workflow_instances (
  id uuid primary key default gen_random_uuid(),
  machine_id text not null references workflow_definitions (id),
  protocol_id text not null references protocols (id),
  state text not null,
  context jsonb not null default '{}',
  channel_id text,
  guild_id text,
  created_by_user_id bigint references users (id) on delete set null,
  updated_by_user_id bigint references users (id) on delete set null,
  -- Optimistic concurrency: every write bumps it; a write naming another one is refused.
  version integer not null default 1,
  -- Counts state entries (1 at creation, +1 on each transition): (state, state_visit) names the
  -- visit whose approvals and evidence a guard counts.
  state_visit integer not null default 1,
  state_entered_at timestamptz not null default now(),
  registry_instance_id bigint references instances (id) on delete set null,
  active_run_id uuid,
  archived_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index workflow_instances_creator on workflow_instances (created_by_user_id, created_at desc);
create index workflow_instances_created on workflow_instances (created_at desc, id desc);
create index workflow_instances_channel on workflow_instances (channel_id) where channel_id is not null;

create table workflow_approvals (
  id uuid primary key default gen_random_uuid(),
  instance_id uuid not null references workflow_instances (id) on delete cascade,
  state text not null,
  state_visit integer not null,
  approved_by_user_id bigint references users (id) on delete set null,
  approved_by_name text not null,
  note text,
  created_at timestamptz not null default now()
);
create index workflow_approvals_visit on workflow_approvals (instance_id, state, state_visit);

create table workflow_tasks (
  id uuid primary key default gen_random_uuid(),
  instance_id uuid not null references workflow_instances (id) on delete cascade,
  title text not null,
  description text not null default '',
  status text not null default 'pending',
  specialty text not null default 'general',
  assigned_persona_id bigint references users (id) on delete set null,
  assigned_human text,
  notes text not null default '',
  metadata jsonb not null default '{}',
  run_count integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint workflow_tasks_status check (status in ('pending', 'in_progress', 'completed', 'blocked')),
  constraint workflow_tasks_specialty check (specialty in ('code', 'docs', 'tests', 'design', 'ops', 'general'))
);
create index workflow_tasks_instance on workflow_tasks (instance_id, created_at, id);

create table workflow_artifacts (
  id uuid primary key default gen_random_uuid(),
  instance_id uuid not null references workflow_instances (id) on delete cascade,
  task_id uuid references workflow_tasks (id) on delete set null,
  persona_id bigint,
  summary text not null default '',
  content text not null default '',
  status text not null default 'draft',
  review_status text not null default 'pending',
  reviewed_by_user_id bigint references users (id) on delete set null,
  review_notes text,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  reviewed_at timestamptz,
  constraint workflow_artifacts_status check (status in ('draft', 'ready')),
  constraint workflow_artifacts_review check (review_status in ('pending', 'approved', 'rejected'))
);
create index workflow_artifacts_instance on workflow_artifacts (instance_id, created_at, id);

-- Orchestrator runs (the orchestrator executes them; this module creates, lists and cancels).
create table workflow_runs (
  id uuid primary key default gen_random_uuid(),
  instance_id uuid not null references workflow_instances (id) on delete cascade,
  status text not null default 'queued',
  trigger text not null,
  task_ids jsonb not null default '[]',
  progress jsonb not null default '{"total": 0, "completed": 0, "failed": 0}',
  error jsonb,
  created_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  constraint workflow_runs_status check (status in ('queued', 'running', 'completed', 'failed', 'canceled')),
  constraint workflow_runs_trigger check (trigger in ('manual', 'state_entry', 'suggestion', 'command', 'rerun'))
);
-- At most one queued or running run per instance.
create unique index workflow_runs_one_active on workflow_runs (instance_id) where status in ('queued', 'running');

-- The timeline module's table: an instance's workflow events (its timeline, the evidence a guard counts).
create index timeline_events_state_machine
  on timeline_events ((metadata ->> 'stateMachineInstanceId'), timeline_at desc, id desc);
