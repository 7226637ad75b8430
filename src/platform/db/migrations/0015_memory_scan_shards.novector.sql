-- Memory retrieval without pgvector (issue 3): the Hamming scan of a large scope is split into
-- statements run at once on separate pool connections, so one retrieval uses more than one core
-- of the database (a user's 10,000 sketches: ~11 ms in one statement, ~6 ms in two). Each
-- statement takes the chunks of some of four shards (chunk_id % 4); the shard is a key column so
-- each statement reads a contiguous range of the index. The embedding's model and size become key
-- columns too: they were a filter on every row read, now they bound the range.
create index memory_embeddings_shard_scan on memory_embeddings (user_id, (chunk_id % 4), model, dim, tier)
  include (source, chunk_id, sketch);
create index memory_embeddings_world_shard_scan on memory_embeddings ((chunk_id % 4), model, dim, user_id)
  include (source, chunk_id, sketch) where tier = 'world';
drop index memory_embeddings_scan;
drop index memory_embeddings_world_scan;
