-- insertMemoriesWithChunks (queued for a remote embedder)

    with m as (
      insert into memories (user_id, content, source, tier, metadata, conversation_id, created_by_user_id)
      select x.user_id, x.content, x.source, x.tier, x.metadata, x.conversation_id, x.created_by
      from unnest($1::bigint[], $2::text[],
                  $3::text[], $4::text[],
                  $5::jsonb[], $6::bigint[],
                  $7::bigint[])
        with ordinality as x(user_id, content, source, tier, metadata, conversation_id, created_by, n)
      order by x.n
      returning id, user_id, tier, source, conversation_id),
    mn as (select m.*, row_number() over (order by m.id) as n from m),
    c as (
      insert into memory_chunks (memory_id, user_id, tier, source, conversation_id, chunk_index, content)
      select mn.id, mn.user_id, mn.tier, mn.source, mn.conversation_id, k.chunk_index, k.content
      from unnest($8::int[], $9::int[],
                  $10::text[]) with ordinality as k(memory, chunk_index, content, n)
      join mn on mn.n = k.memory
      order by k.n
      returning id), q as (insert into memory_embed_queue (chunk_id) select id from c)
    select array(select id from m order by id) as ids, array(select id from c order by id) as chunk_ids, now() as at;
-- parameters: [[7],["The harbour lights are lit at dusk."],["shared"],["shared"],["{\"conversationId\":4}"],[4],[7],[1],[0],["The harbour lights are lit at dusk."]]

-- insertMemoriesWithChunks (embedded here)

    with m as (
      insert into memories (user_id, content, source, tier, metadata, conversation_id, created_by_user_id)
      select x.user_id, x.content, x.source, x.tier, x.metadata, x.conversation_id, x.created_by
      from unnest($1::bigint[], $2::text[],
                  $3::text[], $4::text[],
                  $5::jsonb[], $6::bigint[],
                  $7::bigint[])
        with ordinality as x(user_id, content, source, tier, metadata, conversation_id, created_by, n)
      order by x.n
      returning id, user_id, tier, source, conversation_id),
    mn as (select m.*, row_number() over (order by m.id) as n from m),
    c as (
      insert into memory_chunks (memory_id, user_id, tier, source, conversation_id, chunk_index, content)
      select mn.id, mn.user_id, mn.tier, mn.source, mn.conversation_id, k.chunk_index, k.content
      from unnest($8::int[], $9::int[],
                  $10::text[]) with ordinality as k(memory, chunk_index, content, n)
      join mn on mn.n = k.memory
      order by k.n
      returning id)
    select array(select id from m order by id) as ids, array(select id from c order by id) as chunk_ids, now() as at;
-- parameters: [[7],["The harbour lights are lit at dusk."],["shared"],["shared"],["{\"conversationId\":4}"],[4],[7],[1],[0],["The harbour lights are lit at dusk."]]

-- pendingChunks
select "c"."id", "c"."memory_id", "c"."content" from "memory_chunks" as "c" inner join "memory_embed_queue" as "q" on "q"."chunk_id" = "c"."id" where "c"."memory_id" in ($1, $2) order by "c"."id" limit $3;
-- parameters: [1,2,64]

-- pendingChunks

      select c.id, c.memory_id, c.content
      from (select chunk_id from memory_embed_queue
            
            order by chunk_id limit $1) q
      cross join lateral (select id, memory_id, content from memory_chunks where id = q.chunk_id) c
      order by c.id;
-- parameters: [64]

-- recordEmbedFailure
update "memory_chunks" set "embed_attempts" = "embed_attempts" + $1, "embed_error" = $2 where "id" in ($3, $4);
-- parameters: [1,"timeout",1,2]

-- deleteMemory
delete from "memories" where "id" = $1 and "user_id" = $2;
-- parameters: [3,7]

-- countByTier
select "tier", count(*) as "n" from "memories" group by "tier";
-- parameters: []
