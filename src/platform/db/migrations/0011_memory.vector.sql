-- Memory (issue 3), pgvector variant: memories and their chunks. Embeddings live on chunks with
-- the model and dimension that made them; the column is an unsized `vector`, so a change of model
-- or size needs no migration (rows of another model are re-embedded in the background and ignored
-- by retrieval meanwhile). No HNSW index: retrieval scans each user's scope exactly, because
-- HNSW filters after the index scan and a per-user filter would return fewer than `limit` rows
-- (ARCHITECTURE.md "Pitfalls").
create table memories (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  content text not null,
  source text not null,
  tier text not null,
  metadata jsonb not null default '{}',
  conversation_id bigint,
  created_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint memories_tier check (tier in ('world', 'assistant_core', 'shared'))
);
create index memories_user_created on memories (user_id, created_at desc, id desc);
create index memories_world on memories (created_at desc, id desc) where tier = 'world';

create table memory_chunks (
  id bigint generated always as identity primary key,
  memory_id bigint not null references memories (id) on delete cascade,
  -- Owner, tier, source and conversation are copied from the memory so the scope filter and the
  -- conversation boost need no join.
  user_id bigint not null,
  tier text not null,
  source text not null,
  conversation_id bigint,
  chunk_index integer not null,
  content text not null,
  tsv tsvector generated always as (to_tsvector('english', content)) stored,
  embedding vector,
  embedding_model text,
  embedding_dim integer,
  embedded_at timestamptz,
  embed_attempts integer not null default 0,
  embed_error text,
  unique (memory_id, chunk_index)
);
create index memory_chunks_owner on memory_chunks (user_id, tier);
create index memory_chunks_world on memory_chunks (id) where tier = 'world';
create index memory_chunks_tsv on memory_chunks using gin (tsv);
create index memory_chunks_pending on memory_chunks (id) where embedding is null;
