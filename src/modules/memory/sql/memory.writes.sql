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

-- claimPending

          with picked as (
            select q.chunk_id from memory_embed_queue q join memory_chunks c on c.id = q.chunk_id
            where c.memory_id = any($1::bigint[]) and (q.claimed_until is null or q.claimed_until < now() or not exists (select 1 from service_nodes n where n.id = q.claimed_by
    and n.beat_at > now() - make_interval(secs => 15)))
            order by q.chunk_id limit $2
            for update of q skip locked),
          claimed as (
            update memory_embed_queue q set claimed_until = now() + make_interval(secs => $3), claimed_by = $4::uuid from picked
            where q.chunk_id = picked.chunk_id returning q.chunk_id)
          select c.id, c.memory_id, c.content from claimed join memory_chunks c on c.id = claimed.chunk_id
          order by c.id;
-- parameters: [[1,2],64,300,"00000000-0000-4000-8000-000000000000"]

-- claimPending

      with picked as (
        select q.chunk_id from memory_embed_queue q where (q.claimed_until is null or q.claimed_until < now() or not exists (select 1 from service_nodes n where n.id = q.claimed_by
    and n.beat_at > now() - make_interval(secs => 15)))
        order by q.chunk_id limit $1
        for update skip locked),
      claimed as (
        update memory_embed_queue q set claimed_until = now() + make_interval(secs => $2), claimed_by = $3::uuid from picked
        where q.chunk_id = picked.chunk_id returning q.chunk_id)
      select c.id, c.memory_id, c.content
      from claimed cross join lateral (select id, memory_id, content from memory_chunks where id = claimed.chunk_id) c
      order by c.id;
-- parameters: [64,300,"00000000-0000-4000-8000-000000000000"]

-- releaseClaims
update memory_embed_queue set claimed_until = null, claimed_by = null
    where chunk_id = any($1::bigint[]);
-- parameters: [[1,2]]

-- claimedFor

    select extract(epoch from min(least(q.claimed_until, coalesce((select n.beat_at + make_interval(secs => 15)
    from service_nodes n where n.id = q.claimed_by), now())))
      - now())::float8 as s
    from memory_embed_queue q where q.claimed_until >= now();
-- parameters: []

-- recordEmbedFailure

    with released as (
      update memory_embed_queue set claimed_until = null, claimed_by = null
      where chunk_id = any($1::bigint[]))
    update memory_chunks set embed_attempts = embed_attempts + 1, embed_error = $2
    where id = any($3::bigint[]);
-- parameters: [[1,2],"timeout",[1,2]]

-- deleteMemory
delete from "memories" where "id" = $1 and "user_id" = $2;
-- parameters: [3,7]

-- countByTier
select "tier", count(*) as "n" from "memories" group by "tier";
-- parameters: []
