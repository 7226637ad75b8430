-- Characters (the assistant and NPCs are silicon + npc users), their state, relationships with
-- players, and quests (contract: "Characters and their state").

create table character_profiles (
  user_id bigint primary key references users (id) on delete cascade,
  description text not null default '',
  persona_type text,
  metadata jsonb not null default '{}',
  emotions jsonb not null default '{}',
  config jsonb not null default '{}',
  -- The assistant's own user: exactly one, created at first start.
  is_assistant boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index character_profiles_one_assistant on character_profiles (is_assistant) where is_assistant;

create table relationships (
  user_id bigint not null references users (id) on delete cascade,
  npc_user_id bigint not null references users (id) on delete cascade,
  flags jsonb not null default '{}',
  affinity double precision not null default 0,
  updated_at timestamptz not null default now(),
  primary key (user_id, npc_user_id),
  constraint relationships_affinity check (affinity >= -1 and affinity <= 1)
);
create index relationships_npc on relationships (npc_user_id);

create table quests (
  id bigint generated always as identity primary key,
  title text not null,
  description text not null default '',
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table player_quests (
  quest_id bigint not null references quests (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  status text not null default 'active',
  progress double precision not null default 0,
  updated_at timestamptz not null default now(),
  primary key (user_id, quest_id),
  constraint player_quests_status check (status in ('active', 'completed', 'failed')),
  constraint player_quests_progress check (progress >= 0 and progress <= 1)
);
