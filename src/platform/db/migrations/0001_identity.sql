-- Identity: users, refresh tokens, API keys, and the shared rate-limit counters.

create table users (
  id bigint generated always as identity primary key,
  email text,
  password_hash text,
  name text not null,
  role text not null default 'carbon',
  account_type text not null default 'public',
  energy_coins bigint not null default 0,
  email_verified boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- spec: energy coin balance never below 0
  constraint users_energy_coins_nonnegative check (energy_coins >= 0),
  -- spec: role and account type combinations
  constraint users_role_account_type check (
    (role = 'carbon' and account_type in ('public', 'core_primary'))
    or (role = 'silicon' and account_type in ('developer', 'npc'))
    or (role = 'cso' and account_type = 'public')
  )
);
-- Emails are case-insensitive; characters (NPCs, the assistant) have none.
create unique index users_email_lower on users (lower(email)) where email is not null;

create table refresh_tokens (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  family_id uuid not null,
  token_hash text not null unique,
  client_type text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  used_at timestamptz,
  revoked_at timestamptz,
  constraint refresh_tokens_client_type check (
    client_type in ('web_portal', 'chat_platform', 'api', 'game_client', 'mobile', 'vr', 'ar')
  )
);
create index refresh_tokens_user on refresh_tokens (user_id);
create index refresh_tokens_family on refresh_tokens (family_id);

create table api_keys (
  id bigint generated always as identity primary key,
  name text not null,
  prefix text not null,
  key_hash text not null unique,
  scopes text[] not null,
  created_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

create table rate_limit_counters (
  key text primary key,
  count integer not null,
  reset_at timestamptz not null
);
create index rate_limit_counters_reset on rate_limit_counters (reset_at);
