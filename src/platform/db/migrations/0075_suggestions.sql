-- Suggestions (spec "Suggestion", contract "Suggestions"). Each row is one suggestion for one user
-- in one context (a workflow instance id, `conversation:<id>`, or a chat-platform channel id) and
-- its own history record: how it was answered, executed, undone, and the error of a refused
-- operation.
create table suggestions (
  id uuid primary key default gen_random_uuid(),
  user_id bigint not null references users (id) on delete cascade,
  context_id text not null,
  -- type + target + instance and state visit: a key whose suggestion was declined, cleared,
  -- executed or undone is not made again for the context and user until the instance moves on.
  key text not null,
  type text not null,
  message text not null,
  confidence double precision not null,
  priority integer not null,
  metadata jsonb not null default '{}',
  -- [{ type, label, params }]; safety and autoExecutable follow from the type and the config.
  actions jsonb not null,
  ttl integer not null,
  instance_id uuid references workflow_instances (id) on delete set null,
  channel_id text,
  protocol_id text,
  state text,
  state_visit integer,
  status text not null default 'active',
  expired_reason text,
  action_type text,
  auto_executed boolean not null default false,
  response_time_ms double precision,
  executed_at timestamptz,
  execution_time_ms double precision,
  error jsonb,
  undone_at timestamptz,
  -- What an executed transition changed, for its undo: { from, visit, version }.
  outcome jsonb,
  -- An execution in progress holds the row until then (no two run the same suggestion).
  claimed_until timestamptz,
  -- The suggestion's timestamp, from the service's clock (ttl expiry is measured against it).
  created_at timestamptz not null,
  updated_at timestamptz not null default now(),
  constraint suggestions_status check (status in ('active', 'accepted', 'declined', 'expired', 'executed')),
  constraint suggestions_expired_reason check (expired_reason in ('trigger', 'ttl', 'cleared')),
  constraint suggestions_confidence check (confidence between 0 and 1),
  constraint suggestions_priority check (priority between 0 and 100)
);
-- One open (active or accepted) suggestion per key; a pass racing another inserts nothing twice.
create unique index suggestions_open_key on suggestions (user_id, context_id, key)
  where status in ('active', 'accepted');
-- A context's suggestions for a user: the open ones, and the keys that must not come back.
create index suggestions_context on suggestions (user_id, context_id, key);
-- History by user, channel and instance, newest first.
create index suggestions_user_history on suggestions (user_id, created_at desc, id desc);
create index suggestions_channel_history on suggestions (channel_id, created_at desc, id desc)
  where channel_id is not null;
create index suggestions_instance_history on suggestions (instance_id, created_at desc, id desc)
  where instance_id is not null;

-- Each user's AutoExecutionConfig; no row: the defaults.
create table suggestion_configs (
  user_id bigint primary key references users (id) on delete cascade,
  auto_run_orchestrator boolean not null,
  auto_transition_on_guard boolean not null,
  auto_suggest_next_step boolean not null,
  require_confirmation_for jsonb not null default '[]',
  never_auto_execute jsonb not null default '[]',
  undo_window_minutes integer not null,
  updated_at timestamptz not null default now(),
  constraint suggestion_configs_undo_window check (undo_window_minutes between 0 and 1440)
);

-- What a context means to a user beyond its id: the protocol they chose there, the instance bound
-- to it, and the intent of the last message analysed there (so a message is analysed once).
create table suggestion_contexts (
  user_id bigint not null references users (id) on delete cascade,
  context_id text not null,
  protocol_id text references protocols (id),
  instance_id uuid references workflow_instances (id) on delete set null,
  intent_message_hash text,
  intent text,
  intent_confidence double precision,
  updated_at timestamptz not null default now(),
  primary key (user_id, context_id)
);
create index suggestion_contexts_instance on suggestion_contexts (instance_id) where instance_id is not null;
