-- Each observer's meta-state (contract: "Observer"): its cycles and its latest reflection. The
-- observer module's table.
create table observer_meta_states (
  observer_id bigint primary key references instances (id) on delete cascade,
  cycles integer not null default 0,
  last_cycle_at timestamptz,
  last_cycle_outcome text check (last_cycle_outcome in ('completed', 'failed')),
  last_reflection_id bigint,
  last_reflection_at timestamptz,
  -- What the last cycle saw: { instances, activeInstances, eventsInWindow }.
  awareness jsonb,
  updated_at timestamptz not null default now()
);
