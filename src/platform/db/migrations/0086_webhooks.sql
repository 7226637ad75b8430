-- Outbound webhooks for timeline events: endpoints registered by administrators, one delivery per
-- matching event and endpoint (written in the event's transaction with its job), each attempt
-- logged.
create table webhooks (
  id uuid primary key,
  url text not null,
  -- Event types delivered; '*' is every type.
  event_types text[] not null,
  -- Only events of this observer (null: every observer).
  observer_id bigint references instances (id) on delete cascade,
  description text not null default '',
  enabled boolean not null default true,
  -- The signing secret, AES-256-GCM encrypted (it must be read back to sign; never answered).
  secret_ciphertext text not null,
  created_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint webhooks_url_length check (length(url) between 1 and 2048),
  constraint webhooks_event_types check (cardinality(event_types) between 1 and 50)
);

create table webhook_deliveries (
  id uuid primary key,
  webhook_id uuid not null references webhooks (id) on delete cascade,
  -- The timeline event delivered (null: a test delivery). No foreign key: the timeline is the
  -- timeline module's, and the log only names the event.
  event_id bigint,
  event_type text not null,
  -- Exactly the bytes signed and sent, at every attempt.
  body text not null,
  status text not null default 'pending',
  attempts integer not null default 0,
  last_status_code integer,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  delivered_at timestamptz,
  constraint webhook_deliveries_status check (status in ('pending', 'succeeded', 'failed'))
);
create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, created_at desc, id desc);
create index webhook_deliveries_finished on webhook_deliveries (updated_at) where status <> 'pending';

create table webhook_delivery_attempts (
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  attempted_at timestamptz not null default now(),
  status_code integer,
  error text,
  duration_ms integer not null,
  primary key (delivery_id, attempt)
);
