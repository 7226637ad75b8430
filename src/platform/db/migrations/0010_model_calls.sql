-- Every model call the gateway makes (issue 3: "a record of every call (purpose, model, tokens
-- in/out, latency, outcome) in the database for the admin stats"). One row per logical call;
-- `attempts` counts the retries it took.
create table model_calls (
  id bigint generated always as identity primary key,
  kind text not null,
  purpose text not null,
  provider text not null,
  model text not null,
  tokens_in integer not null default 0,
  tokens_out integer not null default 0,
  latency_ms integer not null,
  attempts integer not null default 1,
  outcome text not null,
  error text,
  created_at timestamptz not null default now(),
  constraint model_calls_kind check (kind in ('chat', 'stream', 'embed', 'vision')),
  constraint model_calls_outcome check (outcome in ('ok', 'error'))
);
create index model_calls_created on model_calls (created_at);
