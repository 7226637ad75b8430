-- Chat-platform channel configuration: a channel can carry a protocol id that overrides routing
-- except for core_primary accounts (spec "Protocols and routing").

create table chat_platform_channels (
  channel_id text primary key,
  guild_id text,
  protocol_id text not null references protocols (id),
  updated_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint chat_platform_channels_id_length check (length(channel_id) between 1 and 200)
);
create index chat_platform_channels_protocol on chat_platform_channels (protocol_id);
