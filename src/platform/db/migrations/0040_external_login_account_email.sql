-- External login (OAuth 2.0 / OIDC), email verification, password reset and the mail outbox.
-- Every secret here (OAuth state, one-time login codes, email tokens) is stored as a SHA-256
-- hash, single-use and with an expiry; nodes keep none of it in memory (several nodes).

-- One row per started external login: the state (hashed) finds it again at the callback, and
-- the browser that started it must bring back the cookie whose hash is `browser_hash`.
-- The PKCE verifier and nonce must be sent or compared in clear, so they are kept as given;
-- the row lives minutes and is deleted when the callback consumes it.
create table oauth_flows (
  id bigint generated always as identity primary key,
  state_hash text not null unique,
  provider text not null,
  code_verifier text not null,
  nonce text,
  browser_hash text not null,
  client_type text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  constraint oauth_flows_client_type check (
    client_type in ('web_portal', 'chat_platform', 'api', 'game_client', 'mobile', 'vr', 'ar')
  )
);
create index oauth_flows_expires on oauth_flows (expires_at);

-- The one-time code the app trades at POST /api/auth/exchange (the API contract: once, 60 s).
create table oauth_login_codes (
  id bigint generated always as identity primary key,
  code_hash text not null unique,
  user_id bigint not null references users (id) on delete cascade,
  client_type text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  constraint oauth_login_codes_client_type check (
    client_type in ('web_portal', 'chat_platform', 'api', 'game_client', 'mobile', 'vr', 'ar')
  )
);
create index oauth_login_codes_expires on oauth_login_codes (expires_at);

-- Which provider account (issuer-side subject) belongs to which user.
create table user_identities (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  provider text not null,
  subject text not null,
  email text,
  created_at timestamptz not null default now(),
  last_login_at timestamptz not null default now(),
  constraint user_identities_provider_subject unique (provider, subject)
);
create index user_identities_user on user_identities (user_id);

-- Email verification and password reset tokens. `email` is the address the token was sent to:
-- a verification applies only while the account still has that address.
create table account_tokens (
  id bigint generated always as identity primary key,
  purpose text not null,
  token_hash text not null unique,
  user_id bigint not null references users (id) on delete cascade,
  email text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  constraint account_tokens_purpose check (purpose in ('verify_email', 'reset_password'))
);
create index account_tokens_user on account_tokens (user_id, purpose);
create index account_tokens_expires on account_tokens (expires_at);

-- Without SMTP_URL, mail is written here (and to the log) so development works offline.
create table mail_outbox (
  id bigint generated always as identity primary key,
  recipient text not null,
  subject text not null,
  text_body text not null,
  html_body text,
  created_at timestamptz not null default now()
);
