-- searchChunks (pgvector)
select (select coalesce(json_agg(t), '[]'::json) from (
      select c.id, c.memory_id, c.chunk_index, c.conversation_id, ts_rank(c.tsv, q.query, 1)::float8 as rank
      from memory_chunks c, (select (select replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery) as query) q
      where ("c".user_id = $2 or "c".tier = 'world' or ("c".user_id = $3 and "c".tier = 'assistant_core')) and c.tsv @@ q.query
      order by 5 desc, 1 limit $4) t) as "r0";
-- parameters: ["harbour lights",7,2,40]

-- searchChunks (a scene's characters, and their reach into the player's memories)
select (select coalesce(json_agg(t), '[]'::json) from (
      select c.id, c.memory_id, c.chunk_index, c.conversation_id, ts_rank(c.tsv, q.query, 1)::float8 as rank
      from memory_chunks c, (select (select replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery) as query) q
      where (("c".user_id = $2 and ("c".conversation_id is null or "c".conversation_id = any($3::int8[]))) or "c".tier = 'world' or ("c".user_id = any($4::int8[]) and "c".tier = 'assistant_core')) and c.tsv @@ q.query
      order by 5 desc, 1 limit $5) t) as "r0";
-- parameters: ["harbour lights",7,[11,12],[2,3],40]

-- pgvector nearest (the vector side)

      select c.id, c.memory_id, c.chunk_index, c.conversation_id, n.distance
      from (select e.chunk_id, (e.embedding <=> $1::vector)::float8 as distance
            from memory_embeddings e where ("e".user_id = $2 or "e".tier = 'world' or ("e".user_id = $3 and "e".tier = 'assistant_core')) and e.model = $4 and e.dim = $5 order by 2, 1 limit $6) n
      cross join lateral (select id, memory_id, chunk_index, conversation_id from memory_chunks where id = n.chunk_id limit 1) c;
-- parameters: ["[0.1,0.2,0.3]",7,2,"text-embedding-3-small",3,40]

-- pgvector nearest (a reach into the player's memories)

      select c.id, c.memory_id, c.chunk_index, c.conversation_id, n.distance
      from (select e.chunk_id, (e.embedding <=> $1::vector)::float8 as distance
            from memory_embeddings e join memory_chunks k on k.id = e.chunk_id where (("k".user_id = $2 and ("k".conversation_id is null or "k".conversation_id = any($3::int8[]))) or "k".tier = 'world' or ("k".user_id = any($4::int8[]) and "k".tier = 'assistant_core')) and e.model = $5 and e.dim = $6 order by 2, 1 limit $7) n
      cross join lateral (select id, memory_id, chunk_index, conversation_id from memory_chunks where id = n.chunk_id limit 1) c;
-- parameters: ["[0.1,0.2,0.3]",7,[11,12],[2,3],"text-embedding-3-small",3,40]

-- searchChunks (full text only)
select (select coalesce(json_agg(t), '[]'::json) from (
      select c.id, c.memory_id, c.chunk_index, c.conversation_id, ts_rank(c.tsv, q.query, 1)::float8 as rank
      from memory_chunks c, (select (select replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery) as query) q
      where ("c".user_id = $2 or "c".tier = 'world' or ("c".user_id = $3 and "c".tier = 'assistant_core')) and c.tsv @@ q.query
      order by 5 desc, 1 limit $4) t) as "r0";
-- parameters: ["harbour lights",7,2,40]

-- sketchRows (a part brought up to date, and the world read whole)

    select h.horizon, d.*
    from (select pg_snapshot_xmin(pg_current_snapshot())::text as horizon) h
    left join lateral (select 0::int as part, false as gone, e.chunk_id, e.user_id, e.tier, e.source,
        e.model, e.dim, substring(varbit_send(e.sketch) from 5) as sketch, e.embedding_i8, e.memory_id,
        e.chunk_index, e.conversation_id
      from memory_embeddings e where "e"."user_id" = $1 and "e"."xid" >= $2::xid8 and "e"."xid" < pg_snapshot_xmax(pg_current_snapshot()) union all select 0::int, true, g.chunk_id, null, null, null, null, null, null, null, null, null, null
        from memory_embeddings_gone g where "g"."user_id" = $3 and "g"."xid" >= $4::xid8 and "g"."xid" < pg_snapshot_xmax(pg_current_snapshot()) union all select 1::int as part, false as gone, e.chunk_id, e.user_id, e.tier, e.source,
        e.model, e.dim, substring(varbit_send(e.sketch) from 5) as sketch, e.embedding_i8, e.memory_id,
        e.chunk_index, e.conversation_id
      from memory_embeddings e where "e"."tier" = 'world') d on true;
-- parameters: [7,"1234",7,"1234"]

-- sketchChanges (held parts brought up to date)
select (select json_build_object('horizon', pg_snapshot_xmin(pg_current_snapshot())::text,
      'rows', (select coalesce(json_agg(d), '[]'::json) from (select 0::int as part, false as gone, e.chunk_id, e.user_id, e.tier, e.source,
        e.model, e.dim, substring(varbit_send(e.sketch) from 5) as sketch, e.embedding_i8, e.memory_id,
        e.chunk_index, e.conversation_id
      from memory_embeddings e where "e"."user_id" = $1 and "e"."xid" >= $2::xid8 and "e"."xid" < pg_snapshot_xmax(pg_current_snapshot()) union all select 0::int, true, g.chunk_id, null, null, null, null, null, null, null, null, null, null
        from memory_embeddings_gone g where "g"."user_id" = $3 and "g"."xid" >= $4::xid8 and "g"."xid" < pg_snapshot_xmax(pg_current_snapshot())) d))) as "r0";
-- parameters: [7,"1234",7,"1234"]

-- findByIds
select "id", "user_id", "content", "source", "tier", "metadata", "conversation_id", "created_at", "updated_at" from "memories" where "id" = any($1::bigint[]);
-- parameters: [[3,5,8]]

-- withNeighbours (the reranked memories and the ones written around them)

    with m as (select id, user_id, tier, conversation_id, created_at from memories where id = any($1::bigint[]))
    select "x"."id", "x"."user_id", "x"."content", "x"."source", "x"."tier", "x"."conversation_id", "x"."created_at", null::bigint as of, null as side from memories x where x.id in (select id from m)
    union all
    select "x"."id", "x"."user_id", "x"."content", "x"."source", "x"."tier", "x"."conversation_id", "x"."created_at", m.id, 'previous' from m cross join lateral (
      select * from memories x where x.user_id = m.user_id and (x.created_at, x.id) < (m.created_at, m.id)
      order by x.created_at desc, x.id desc limit 1) x
    where x.tier = m.tier and x.conversation_id is not distinct from m.conversation_id
    union all
    select "x"."id", "x"."user_id", "x"."content", "x"."source", "x"."tier", "x"."conversation_id", "x"."created_at", m.id, 'next' from m cross join lateral (
      select * from memories x where x.user_id = m.user_id and (x.created_at, x.id) > (m.created_at, m.id)
      order by x.created_at, x.id limit 1) x
    where x.tier = m.tier and x.conversation_id is not distinct from m.conversation_id;
-- parameters: [[3,5,8]]

-- newestInScope
select "m"."id", "m"."user_id", "m"."content", "m"."source", "m"."tier", "m"."metadata", "m"."conversation_id", "m"."created_at", "m"."updated_at" from "memories" as "m" where ("m".user_id = $1 or "m".tier = 'world' or ("m".user_id = $2 and "m".tier = 'assistant_core')) and "m".source = $3 and not (m.metadata ? 'supersededBy') order by "m"."created_at" desc, "m"."id" desc limit $4;
-- parameters: [7,2,"shared",10]

-- lexicalSearch

    select c.memory_id, max(ts_rank(c.tsv, q.query, 1))::float8 as rank
    from memory_chunks c, (select (select replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery) as query) q
    where ("c".user_id = $2 or "c".tier = 'world' or ("c".user_id = $3 and "c".tier = 'assistant_core')) and c.tsv @@ q.query
    group by c.memory_id order by 2 desc, 1 desc limit $4;
-- parameters: ["harbour",7,2,10]
