-- Memory (issue 3): the references of memories and chunks are kept by statement-level triggers
-- instead of foreign keys. A foreign key checks every row on its own (one lookup and one row lock
-- per memory, and one per chunk): a quarter of the time of the statement that writes a batch of
-- memories and their chunks. The triggers below check and cascade once per statement, with the
-- same outcome:
--   - a memory's owner and author must exist (and cannot be deleted until the writing transaction
--     ends: the same key-share lock a foreign-key check takes, once per user);
--   - deleting a user deletes their memories and clears them as author elsewhere;
--   - deleting a memory deletes its chunks (whose own trigger, 0012, takes their embeddings).
-- Chunks are only ever written with their memory (the same statement, or an edit holding the
-- memory's row lock), so they need no insert check. Like the rest of the service, this relies on
-- READ COMMITTED: each statement of a trigger sees what committed before it ran.
alter table memory_chunks drop constraint memory_chunks_memory_id_fkey;
alter table memories drop constraint memories_user_id_fkey, drop constraint memories_created_by_user_id_fkey;

create function memories_check_users() returns trigger language plpgsql as $$
begin
  perform 1 from users u
    where u.id in (select w.user_id from written w union select w.created_by_user_id from written w)
    for key share of u;
  if exists (select 1 from written w where not exists (select 1 from users u where u.id = w.user_id))
    or exists (select 1 from written w where w.created_by_user_id is not null
                 and not exists (select 1 from users u where u.id = w.created_by_user_id)) then
    raise foreign_key_violation using message = 'a memory''s owner or author does not exist';
  end if;
  return null;
end $$;
create trigger memories_check_users_insert after insert on memories
  referencing new table as written for each statement execute function memories_check_users();
create trigger memories_check_users_update after update on memories
  referencing new table as written for each statement execute function memories_check_users();

create function memories_gone() returns trigger language plpgsql as $$
begin
  delete from memory_chunks c using gone g where c.memory_id = g.id;
  return null;
end $$;
create trigger memories_gone after delete on memories
  referencing old table as gone for each statement execute function memories_gone();

create function users_memories_gone() returns trigger language plpgsql as $$
begin
  delete from memories m using gone g where m.user_id = g.id;
  update memories m set created_by_user_id = null from gone g where m.created_by_user_id = g.id;
  return null;
end $$;
create trigger users_memories_gone after delete on users
  referencing old table as gone for each statement execute function users_memories_gone();
