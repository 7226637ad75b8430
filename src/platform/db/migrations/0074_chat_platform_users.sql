-- Chat-platform users linked to accounts: a command sent with an API key acts as the account its
-- platform user is linked to (PUT /api/admin/chat-platform/users/<platformUserId>).

create table chat_platform_users (
  platform_user_id text primary key,
  user_id bigint not null references users (id) on delete cascade,
  linked_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint chat_platform_users_id_length check (length(platform_user_id) between 1 and 100)
);
create index chat_platform_users_user on chat_platform_users (user_id);
