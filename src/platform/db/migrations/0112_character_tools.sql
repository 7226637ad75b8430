-- A character's tools (its card's `tools`): which economy tools it may call in a chat turn and
-- their limits per player and UTC day. Null: none (the assistant then keeps the default tools).
alter table character_profiles add column tools jsonb;

-- The director's changes a character made for a player today, summed to check its daily limits.
create index economy_ledger_director_day on economy_ledger (user_id, kind, actor_user_id, created_at)
  where actor_kind = 'director';
