-- Memory retrieval without pgvector (issues 3 and 5): the vector side runs wholly in the service's
-- sketch index (memory.sketch-index.ts), with no read of its own on a search.
-- - Each embedding is stored as int8 values (memory.sketch.ts `quantize`: scaled so the largest
--   magnitude is 127; cosine needs no scale) in memory_embeddings itself, so the index reads it with
--   the sketch and reranks there (before, the 240 nearest chunks' float32 embeddings, 1.5 KB each at
--   384 dimensions, were read on every search). The float32 table goes: an embedding is written
--   once, to one table, at a quarter of the size.
-- - The chunk's keys (memory, position, conversation; fixed for a chunk's life: an edit makes new
--   chunks) are copied beside it, so the index answers with them.
-- - A deleted embedding leaves a tombstone, written by the transaction that deleted it and read
--   like a new row (`xid >= horizon`), so the index drops deleted chunks at its next read instead
--   of finding them gone in the database. Tombstones are swept after a day (the maintenance job);
--   the index reads a part whole when it has not read it for an hour.
alter table memory_embeddings
  add column embedding_i8 bytea,
  add column memory_id bigint,
  add column chunk_index integer,
  add column conversation_id bigint;

-- The stored float32 embeddings (little-endian), converted here as `quantize` does (the same
-- float8 arithmetic, so the same bytes).
create function pg_temp.float4_le(b bytea, o int) returns float8 language sql immutable as $$
  select case
    when x.e = 0 or x.e = 255 then 0::float8 -- zero and subnormals; not finite (never stored)
    else (1 - 2 * (x.hi >> 7)) * (1 + x.m / 8388608.0::float8) * 2::float8 ^ (x.e - 127)
  end
  from (select get_byte(b, o + 3) as hi,
               ((get_byte(b, o + 3) & 127) << 1) | (get_byte(b, o + 2) >> 7) as e,
               ((get_byte(b, o + 2) & 127) << 16) | (get_byte(b, o + 1) << 8) | get_byte(b, o) as m) x
$$;

-- One pass over the table: each row gets its int8 values (null without a float32 row) and its
-- chunk's keys (none for a row whose chunk is gone).
with f as (
  select v.chunk_id, array_agg(pg_temp.float4_le(v.embedding, 4 * (i - 1)) order by i) as xs
  from memory_embedding_vectors v, generate_series(1, length(v.embedding) / 4) i
  group by v.chunk_id
), q as (
  select f.chunk_id, (
    select decode(coalesce(string_agg(lpad(to_hex((sign(y.y) * floor(abs(y.y) + 0.5))::int & 255), 2, '0'),
             '' order by u.i), ''), 'hex')
    from (select max(abs(x)) as max from unnest(f.xs) x) m,
         unnest(f.xs) with ordinality as u(x, i),
         lateral (select case when m.max = 0 then 0::float8 else u.x * 127 / m.max end as y) y
  ) as bytes
  from f
)
update memory_embeddings e
  set embedding_i8 = q.bytes, memory_id = c.memory_id, chunk_index = c.chunk_index,
    conversation_id = c.conversation_id
  from memory_chunks c left join q on q.chunk_id = c.id
  where c.id = e.chunk_id;

-- An embedding without its float32 row (none is expected) is made again by the embedding job.
insert into memory_embed_queue (chunk_id)
  select chunk_id from memory_embeddings where embedding_i8 is null and memory_id is not null
  on conflict do nothing;
delete from memory_embeddings where embedding_i8 is null or memory_id is null;
alter table memory_embeddings
  alter column embedding_i8 set not null,
  alter column memory_id set not null,
  alter column chunk_index set not null;

drop table memory_embedding_vectors;

create table memory_embeddings_gone (
  chunk_id bigint not null,
  user_id bigint not null,
  tier text not null,
  xid xid8 not null default pg_current_xact_id(),
  gone_at timestamptz not null default clock_timestamp()
);
create index memory_embeddings_gone_owner_xid on memory_embeddings_gone (user_id, xid);
create index memory_embeddings_gone_world_xid on memory_embeddings_gone (xid) where tier = 'world';
create index memory_embeddings_gone_at on memory_embeddings_gone (gone_at);

create or replace function memory_chunks_gone() returns trigger language plpgsql as $$
begin
  with d as (delete from memory_embeddings e using gone g where e.chunk_id = g.id
             returning e.chunk_id, e.user_id, e.tier)
  insert into memory_embeddings_gone (chunk_id, user_id, tier) select * from d;
  delete from memory_embed_queue q using gone g where q.chunk_id = g.id;
  return null;
end $$;
