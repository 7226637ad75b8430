-- The audit log (contract: "Admin zones"): one row per write request and per request answered 401,
-- 403 or 5xx, written after the response in batches. Never a body, a header or a token: the path
-- is stored without its query string.
create table audit_logs (
  id bigint generated always as identity primary key,
  at timestamptz not null,
  request_id text not null,
  method text not null,
  path text not null,
  route text,
  status int not null,
  problem_code text,
  -- No foreign keys: the log outlives the accounts and keys it names.
  actor_user_id bigint,
  actor_kind text not null,
  api_key_id bigint,
  ip text,
  duration_ms double precision not null,
  constraint audit_logs_actor_kind check (actor_kind in ('user', 'api_key', 'anonymous'))
);
-- Newest first, the cursor's order; and the two filters that find a few rows among many. The
-- others (method, status, path prefix, time) filter the newest-first scan: every index is paid on
-- each of the thousands of rows a second a busy node writes, the list is read rarely.
create index audit_logs_at on audit_logs (at desc, id desc);
create index audit_logs_request on audit_logs (request_id);
create index audit_logs_actor on audit_logs (actor_user_id, at desc) where actor_user_id is not null;
