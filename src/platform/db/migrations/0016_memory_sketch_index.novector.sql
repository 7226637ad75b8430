-- Memory retrieval without pgvector (issues 3 and 5): the Hamming ranking moves into the service
-- (memory.sketch-index.ts), which keeps the sketches of the scopes it searches and, before each
-- search, reads only the rows written since its previous read. What is new is told by the writing
-- transaction: each row carries its id (`xid`, on insert and on every update); a read notes its
-- snapshot's xmin (the oldest transaction still running), and every row it did not see was written
-- by a transaction with an id at least that. The next read asks for `xid >= xmin`.
-- The covering indexes of the SQL scan (0015) go: they held a copy of every sketch (~280 bytes a
-- row, written with each embedding); a user's rows, or the world tier's, are now read through
-- small indexes keyed by the writing transaction.
alter table memory_embeddings add column xid xid8 not null default pg_current_xact_id();

create function memory_embeddings_touch() returns trigger language plpgsql as $$
begin
  new.xid := pg_current_xact_id();
  return new;
end $$;
create trigger memory_embeddings_touch before update on memory_embeddings
  for each row execute function memory_embeddings_touch();

create index memory_embeddings_owner_xid on memory_embeddings (user_id, xid);
create index memory_embeddings_world_xid on memory_embeddings (xid) where tier = 'world';
drop index memory_embeddings_shard_scan;
drop index memory_embeddings_world_shard_scan;
