-- Items, user inventory (many-to-many), and the append-only economy ledger (spec: "Item and user
-- inventory", "Inventory endpoints" rules 1-2). users.energy_coins and its CHECK are in 0001.

create table items (
  id bigint generated always as identity primary key,
  name text not null,
  description text not null default '',
  type text not null,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table user_inventory (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  item_id bigint not null references items (id) on delete cascade,
  -- spec: inventory rule 1, a record whose quantity reaches 0 is removed
  quantity bigint not null check (quantity > 0),
  updated_at timestamptz not null default now(),
  unique (user_id, item_id)
);
create index user_inventory_item on user_inventory (item_id);

-- Every currency and item change: who, why, before, after. No foreign key on the subject so the
-- audit trail outlives a deleted character; rows are never updated or deleted.
create table economy_ledger (
  id bigint generated always as identity primary key,
  user_id bigint not null,
  kind text not null check (kind in ('currency', 'item')),
  item_id bigint,
  delta bigint not null,
  balance_before bigint not null,
  balance_after bigint not null check (balance_after >= 0),
  actor_user_id bigint,
  actor_kind text not null,
  reason text not null default '',
  idempotency_key text,
  timeline_event_id bigint,
  created_at timestamptz not null default now(),
  constraint economy_ledger_item check ((kind = 'item') = (item_id is not null)),
  constraint economy_ledger_arithmetic check (balance_after = balance_before + delta)
);
create index economy_ledger_user on economy_ledger (user_id, kind, item_id, id);

create function economy_ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'economy_ledger is append-only';
end $$;
create trigger economy_ledger_no_update before update or delete on economy_ledger
  for each row execute function economy_ledger_append_only();
create trigger economy_ledger_no_truncate before truncate on economy_ledger
  for each statement execute function economy_ledger_append_only();
