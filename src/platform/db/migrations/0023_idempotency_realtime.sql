-- Idempotency keys (ARCHITECTURE.md convention 6 and 10): stored in the database so every node
-- sees them; scoped per caller and route; the first successful answer is replayed.
create table idempotency_keys (
  scope text not null,
  key text not null,
  fingerprint text not null,
  status_code integer,
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (scope, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

-- @socket.io/postgres-adapter keeps payloads over NOTIFY's 8000-byte limit here (Postgres only;
-- harmless on the embedded database).
create table if not exists socket_io_attachments (
  id bigserial unique,
  created_at timestamptz default now(),
  payload bytea
);
