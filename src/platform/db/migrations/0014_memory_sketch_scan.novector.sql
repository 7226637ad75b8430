-- Memory retrieval without pgvector (issue 3): the Hamming ranking reads every sketch of the
-- caller's scope. A user's chunks are spread over the heap (memories of many users arrive
-- interleaved), so a bitmap heap scan of 10,000 sketches touched thousands of pages (~11 ms).
-- Covering indexes make it an index-only scan (~2 ms): the repository ranks each part of the
-- scope (the user's own chunks, the world tier, the NPC's core) in its own branch of a UNION ALL,
-- each answered from one of these indexes. They replace the two narrow indexes they extend.
create index memory_embeddings_scan on memory_embeddings (user_id, tier)
  include (model, dim, source, chunk_id, sketch);
create index memory_embeddings_world_scan on memory_embeddings (user_id)
  include (model, dim, source, chunk_id, sketch) where tier = 'world';
drop index memory_embeddings_owner;
drop index memory_embeddings_world;
