-- Instance registry (spec: "Instance registry") and the unified timeline (spec: "Events",
-- contract: "Instances, timeline and sync").

create table instances (
  id bigint generated always as identity primary key,
  name text not null,
  level smallint not null,
  persona_id bigint,
  source text not null,
  parent_instance_id bigint references instances (id) on delete set null,
  state_machine_instance_id uuid,
  channel_id text,
  user_id bigint references users (id) on delete set null,
  is_active boolean not null default true,
  last_seen_at timestamptz,
  metadata jsonb not null default '{}',
  -- The root observer is created once at first start; the unique index below makes a second
  -- node starting at the same moment unable to create another.
  is_root boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint instances_level check (level in (5, 8)),
  constraint instances_source check (source in ('portal', 'chat_platform', 'state_machine', 'game_client')),
  constraint instances_root_is_observer check (not is_root or level = 8)
);
create unique index instances_one_root on instances (is_root) where is_root;
create index instances_parent on instances (parent_instance_id);
create index instances_level_source on instances (level, source);

create table timeline_events (
  id bigint generated always as identity primary key,
  user_id bigint references users (id) on delete set null,
  event_type text not null,
  event_text text not null default '',
  source text not null,
  instance_id bigint references instances (id) on delete set null,
  observer_id bigint not null references instances (id),
  persona_id bigint,
  metadata jsonb not null default '{}',
  occurred_at timestamptz not null default now(),
  -- Server time of recording: the order of the unified timeline.
  timeline_at timestamptz not null default clock_timestamp()
);
create index timeline_events_observer on timeline_events (observer_id, timeline_at desc, id desc);
create index timeline_events_user on timeline_events (user_id, timeline_at desc, id desc);
create index timeline_events_type on timeline_events (event_type, timeline_at desc);
