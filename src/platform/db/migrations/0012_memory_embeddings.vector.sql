-- Memory (issue 3), pgvector variant: embeddings move out of memory_chunks into a narrow table
-- written by INSERT. Updating the wide chunk row rewrote it with its tsvector (a stored generated
-- column is recomputed on every UPDATE) and touched every index, GIN included. Chunks waiting for
-- their embedding are listed in memory_embed_queue (written with the chunks, in the same
-- transaction), so the job and the chat turn find them on a tiny index.
-- Owner, tier and source are copied from the chunk so the scope filter needs no join. No HNSW
-- index: retrieval scans each user's scope exactly (a post-filtered index would return fewer
-- than `limit` rows).
create table memory_embeddings (
  chunk_id bigint primary key,
  user_id bigint not null,
  tier text not null,
  source text not null,
  model text not null,
  dim integer not null,
  embedding vector not null,
  embedded_at timestamptz not null default now()
);
create index memory_embeddings_owner on memory_embeddings (user_id, tier);
create index memory_embeddings_world on memory_embeddings (chunk_id) where tier = 'world';

create table memory_embed_queue (chunk_id bigint primary key);

insert into memory_embeddings (chunk_id, user_id, tier, source, model, dim, embedding, embedded_at)
  select id, user_id, tier, source, embedding_model, coalesce(embedding_dim, vector_dims(embedding)), embedding, coalesce(embedded_at, now())
  from memory_chunks where embedding is not null and embedding_model is not null;
insert into memory_embed_queue (chunk_id)
  select c.id from memory_chunks c where not exists (select 1 from memory_embeddings e where e.chunk_id = c.id);

-- Dropping the column drops memory_chunks_pending with it.
alter table memory_chunks drop column embedding, drop column embedding_model, drop column embedding_dim, drop column embedded_at;

-- Deleting chunks (a memory forgotten, edited or its owner deleted) removes their embeddings and
-- queue entries: one statement-level trigger instead of a per-row foreign-key check on every
-- embedding written.
create function memory_chunks_gone() returns trigger language plpgsql as $$
begin
  delete from memory_embeddings e using gone g where e.chunk_id = g.id;
  delete from memory_embed_queue q using gone g where q.chunk_id = g.id;
  return null;
end $$;
create trigger memory_chunks_gone after delete on memory_chunks
  referencing old table as gone for each statement execute function memory_chunks_gone();
