-- eventPage (root, first page)
select "id", "user_id", "event_type", "event_text", "source", "instance_id", "observer_id", "persona_id", "metadata", "occurred_at", "timeline_at", to_char(timeline_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "page_key" from "timeline_events" order by "timeline_at" desc, "id" desc limit $1;
-- parameters: [51]

-- eventPage (one observer, after a cursor, oldest first)
select "id", "user_id", "event_type", "event_text", "source", "instance_id", "observer_id", "persona_id", "metadata", "occurred_at", "timeline_at", to_char(timeline_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "page_key" from "timeline_events" where observer_id = $1 and (timeline_at, id) > ($2::timestamptz, $3::int8) order by "timeline_at" asc, "id" asc limit $4;
-- parameters: [3,"2025-05-01T09:30:00.123456Z",901,51]

-- eventPage (a tree, every filter)
select "id", "user_id", "event_type", "event_text", "source", "instance_id", "observer_id", "persona_id", "metadata", "occurred_at", "timeline_at", to_char(timeline_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "page_key" from "timeline_events" where observer_id = any($1::int8[]) and event_type = any($2::text[]) and source = any($3::text[]) and persona_id = any($4::int8[]) and instance_id = $5 and user_id = $6 and text_search @@ websearch_to_tsquery('simple', $7) and timeline_at >= $8::timestamptz and timeline_at < $9::timestamptz and (timeline_at, id) < ($10::timestamptz, $11::int8) order by "timeline_at" desc, "id" desc limit $12;
-- parameters: [[3,8,9],["trade","note"],["game_client"],[2],5,42,"harbour lights","2025-05-01T00:00:00Z","2025-05-02T00:00:00Z","2025-05-01T09:30:00.123456Z",901,51]

-- eventOffsetPage and countMatching
select "id", "user_id", "event_type", "event_text", "source", "instance_id", "observer_id", "persona_id", "metadata", "occurred_at", "timeline_at" from "timeline_events" where observer_id = $1 and text_search @@ websearch_to_tsquery('simple', $2) order by "timeline_at" desc, "id" desc limit $3 offset $4;
-- parameters: [3,"harbour",50,100]

-- eventOffsetPage and countMatching
select count(*) as "n" from "timeline_events" where observer_id = $1 and text_search @@ websearch_to_tsquery('simple', $2);
-- parameters: [3,"harbour"]

-- exportQuery and beyondQuery
select "id", "user_id", "event_type", "event_text", "source", "instance_id", "observer_id", "persona_id", "metadata", "occurred_at", "timeline_at" from "timeline_events" where observer_id = $1 and event_type = any($2::text[]) and source = any($3::text[]) and persona_id = any($4::int8[]) and instance_id = $5 and user_id = $6 and text_search @@ websearch_to_tsquery('simple', $7) and timeline_at >= $8::timestamptz and timeline_at < $9::timestamptz order by "timeline_at" asc, "id" asc limit $10;
-- parameters: [3,["trade","note"],["game_client"],[2],5,42,"harbour lights","2025-05-01T00:00:00Z","2025-05-02T00:00:00Z",10000]

-- exportQuery and beyondQuery
select 1 as "beyond" from "timeline_events" where observer_id = $1 and event_type = any($2::text[]) and source = any($3::text[]) and persona_id = any($4::int8[]) and instance_id = $5 and user_id = $6 and text_search @@ websearch_to_tsquery('simple', $7) and timeline_at >= $8::timestamptz and timeline_at < $9::timestamptz limit $10 offset $11;
-- parameters: [3,["trade","note"],["game_client"],[2],5,42,"harbour lights","2025-05-01T00:00:00Z","2025-05-02T00:00:00Z",1,10000]

-- instancesAsOf (an observer, the root)
with recursive "below"("id") as (select "id" from "instances" where "parent_instance_id" = $1 union all select "i"."id" from "instances" as "i" inner join "below" as "b" on "i"."parent_instance_id" = "b"."id") select "id", "name", "level", "persona_id", "source", "parent_instance_id", "state_machine_instance_id", "channel_id", "user_id", "is_active", "last_seen_at", "metadata", "is_root", "created_at", coalesce((
        select (e.metadata ->> 'isActive')::boolean from timeline_events e
        where e.instance_id = instances.id and e.event_type = 'instance_activity_changed'
          and e.timeline_at <= $2::timestamptz
        order by e.timeline_at desc, e.id desc
        limit 1), true) as "active_then" from "instances" where "id" in (select "id" from "below") and "created_at" <= $3::timestamptz order by "id";
-- parameters: [3,"2025-05-01T12:00:00Z","2025-05-01T12:00:00Z"]

-- instancesAsOf (an observer, the root)
select "id", "name", "level", "persona_id", "source", "parent_instance_id", "state_machine_instance_id", "channel_id", "user_id", "is_active", "last_seen_at", "metadata", "is_root", "created_at", coalesce((
        select (e.metadata ->> 'isActive')::boolean from timeline_events e
        where e.instance_id = instances.id and e.event_type = 'instance_activity_changed'
          and e.timeline_at <= $1::timestamptz
        order by e.timeline_at desc, e.id desc
        limit 1), true) as "active_then" from "instances" where "is_root" = $2 and "created_at" <= $3::timestamptz order by "id";
-- parameters: ["2025-05-01T12:00:00Z",false,"2025-05-01T12:00:00Z"]

-- eventsUpTo and extent
select "id", "user_id", "event_type", "event_text", "source", "instance_id", "observer_id", "persona_id", "metadata", "occurred_at", "timeline_at" from "timeline_events" where observer_id = $1 and "timeline_at" <= $2::timestamptz order by "timeline_at" desc, "id" desc limit $3;
-- parameters: [3,"2025-05-01T12:00:00Z",20]

-- eventsUpTo and extent
select count(*) as "n", min("timeline_at") as "first", max("timeline_at") as "last" from "timeline_events" where observer_id = $1 and "timeline_at" <= $2::timestamptz;
-- parameters: [3,"2025-05-01T12:00:00Z"]

-- windowBreakdown
select "event_type", "source", "persona_id", metadata -> 'instance' ->> 'level' as "level", count(*) as "n" from "timeline_events" where observer_id = any($1::int8[]) and timeline_at >= $2::timestamptz group by "event_type", "source", "persona_id", metadata -> 'instance' ->> 'level';
-- parameters: [[3,8,9],"2025-05-01T12:00:00Z"]

-- withoutDiary

    select count(*)::int as n from unnest($1::int8[]) as i(id)
    where not exists (
      select 1 from timeline_events e
      where e.instance_id = i.id and e.event_type = 'diary_entry' and e.timeline_at >= $2::timestamptz
    );
-- parameters: [[5,6],"2025-05-01T12:00:00Z"]

-- usersConcerned

    with recursive tree(id) as (
      select $1::int8
      union all
      select i.id from instances i join tree t on i.parent_instance_id = t.id
    )
    select u.id from unnest($2::int8[]) as u(id)
    where exists (select 1 from instances i join tree t on t.id = i.id where i.user_id = u.id)
      or exists (
        select 1 from timeline_events e
        where e.user_id = u.id and e.observer_id = any($3::int8[]));
-- parameters: [3,[42,43],[3,8,9]]
