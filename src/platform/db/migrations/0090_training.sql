-- NPC training (the training module). A training job is the durable record of one file or
-- screenshot ingestion: its stage and progress, the memories it stored and, until it ends, the
-- bytes it works on (the job may run on another node, or again after a restart). A by-heart text
-- is stored as consecutive memories; its row names them in order, so the text is reassembled
-- exactly.

create table training_jobs (
  id uuid primary key,
  kind text not null,
  npc_user_id bigint not null references users (id) on delete cascade,
  created_by bigint references users (id) on delete set null,
  file_name text not null,
  mime_type text not null,
  title text,
  languages jsonb not null default '[]',
  status text not null default 'queued',
  stage text not null default 'queued',
  progress double precision not null default 0,
  memory_ids jsonb not null default '[]',
  truncated boolean not null default false,
  offline boolean not null default false,
  error jsonb,
  -- The file, kept until the job ends.
  data bytea,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint training_jobs_kind check (kind in ('ingest_file', 'ingest_screenshot')),
  constraint training_jobs_status check (status in ('queued', 'running', 'completed', 'failed')),
  constraint training_jobs_stage check (stage in ('queued', 'extracting', 'synthesising', 'storing', 'done')),
  constraint training_jobs_progress check (progress between 0 and 1)
);
create index training_jobs_newest on training_jobs (created_at desc, id desc);
create index training_jobs_status on training_jobs (status, created_at desc);

create table training_by_heart (
  id uuid primary key,
  npc_user_id bigint not null references users (id) on delete cascade,
  created_by bigint references users (id) on delete set null,
  title text not null,
  parts integer not null,
  memory_ids jsonb not null,
  created_at timestamptz not null default now(),
  constraint training_by_heart_parts check (parts >= 1)
);
