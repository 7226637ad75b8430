-- Memory (issue 3), exact-scan variant for servers without pgvector: embeddings move out of
-- memory_chunks into a narrow table written by INSERT (updating the wide chunk row rewrote it
-- with its tsvector and touched every index, GIN included). Chunks waiting for their embedding
-- are listed in memory_embed_queue (written with the chunks, in the same transaction).
--
-- Retrieval without pgvector: an exact cosine over real[] in SQL costs ~60 µs a row, too slow for
-- a scope of thousands. Each embedding therefore carries a 2048-bit SimHash sketch (signs of
-- random Hadamard rotations, memory.sketch.ts); the scope is ranked by Hamming distance
-- (bit_count of the XOR, a few hundred ns a row) and only the few hundred closest are reranked by
-- the exact cosine of their float32 embedding (`bytea`, little-endian) in the service process.
-- The float32 embeddings live in a table of their own (memory_embedding_vectors), so the Hamming
-- scan reads narrow rows (~350 bytes instead of ~1.9 KB at 384 dimensions) and only the reranked
-- candidates' embeddings are read, by primary key.
-- Owner, tier and source are copied from the chunk so the scope filter needs no join.
create table memory_embeddings (
  chunk_id bigint primary key,
  user_id bigint not null,
  tier text not null,
  source text not null,
  model text not null,
  dim integer not null,
  sketch bit varying not null,
  embedded_at timestamptz not null default now()
);
create table memory_embedding_vectors (
  chunk_id bigint primary key,
  embedding bytea not null
);
alter table memory_embedding_vectors alter column embedding set storage external;
create index memory_embeddings_owner on memory_embeddings (user_id, tier);
create index memory_embeddings_world on memory_embeddings (chunk_id) where tier = 'world';

create table memory_embed_queue (chunk_id bigint primary key);

-- Sketches are made in the service: every existing chunk is embedded again in the background
-- (the service enqueues the job at start when the queue is not empty); full text serves meanwhile.
insert into memory_embed_queue (chunk_id) select id from memory_chunks;

-- Dropping the column drops memory_chunks_pending with it.
alter table memory_chunks drop column embedding, drop column embedding_model, drop column embedding_dim, drop column embedded_at;

create function memory_chunks_gone() returns trigger language plpgsql as $$
begin
  delete from memory_embeddings e using gone g where e.chunk_id = g.id;
  delete from memory_embedding_vectors e using gone g where e.chunk_id = g.id;
  delete from memory_embed_queue q using gone g where q.chunk_id = g.id;
  return null;
end $$;
create trigger memory_chunks_gone after delete on memory_chunks
  referencing old table as gone for each statement execute function memory_chunks_gone();
