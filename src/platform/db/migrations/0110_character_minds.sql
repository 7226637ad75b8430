-- Characters with minds of their own (issue 55): a character's card beside its description (who
-- it is, how it speaks, what it wants, whether what the player tells it is its own or shared
-- with the other characters), a quest's objectives and a player's current step, and a player's
-- own thread with each character (one direct conversation per player and character).
alter table character_profiles
  add column personality text not null default '',
  add column speaking_style text not null default '',
  add column goals jsonb not null default '[]',
  add column player_memory text not null default 'own' check (player_memory in ('own', 'shared'));

alter table quests add column objectives jsonb not null default '[]';
alter table player_quests add column step integer check (step >= 0);

alter table conversations add column direct_npc_user_id bigint references users (id) on delete cascade;
create unique index conversations_one_direct on conversations (user_id, direct_npc_user_id)
  where direct_npc_user_id is not null;
