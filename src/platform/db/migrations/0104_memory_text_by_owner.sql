-- Full text by owner. With one GIN index over every chunk's tsvector, a search read the index
-- entries of every user's chunks that hold a word of the query (a common word is in a share of
-- the whole table) before it kept its own scope's: its cost grew with everyone's memories. Now
-- the planner reads the scope arm by arm (a bitmap OR): an owner's chunks through a GIN index on
-- (user_id, tsv), the world tier through a partial index of its own. The first needs the
-- btree_gin extension (contrib; PGlite here loads it too), installed into `public`, which no test
-- schema drops. Where it cannot be installed, the index over every chunk stays, as before.
create index memory_chunks_world_text on memory_chunks using gin (tsv) where tier = 'world';
do $$
begin
  create extension if not exists btree_gin with schema public;
  create index memory_chunks_owner_text on memory_chunks using gin (user_id, tsv);
  drop index memory_chunks_tsv;
exception when others then
  raise notice 'btree_gin could not be used (%): full text keeps its index over all chunks', sqlerrm;
end $$;
