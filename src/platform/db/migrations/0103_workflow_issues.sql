-- Issues filed in the configured tracker when a state's collectArtifacts entry action runs: one row
-- per collection, written with the collection's event and the job that files it; the job records
-- the tracker's number and URL here and on each artifact the issue lists.
create table workflow_issues (
  id uuid primary key,
  instance_id uuid not null references workflow_instances (id) on delete cascade,
  state text not null,
  state_visit integer not null,
  -- The artifacts the issue lists, as the collection saw them.
  artifact_ids uuid[] not null,
  -- Exactly what is sent, at every attempt.
  title text not null,
  body text not null,
  status text not null default 'pending',
  attempts integer not null default 0,
  number integer,
  url text,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint workflow_issues_status check (status in ('pending', 'created', 'failed'))
);
create index workflow_issues_instance on workflow_issues (instance_id, created_at);

-- The newest issue that lists the artifact: `{ number, url }`, or null.
alter table workflow_artifacts add column issue jsonb;
