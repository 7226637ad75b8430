-- The unified timeline of an observer (contract: "Observer"): pages in (timeline_at, id) order
-- both ways, full-text search on the event text, and the past rebuilt from activity changes.

-- Full text on event_text, `simple` configuration (every word, any case, no stemming), stored so
-- a filter on it never recomputes a document, and indexed so a search is served by the index.
alter table timeline_events
  add column text_search tsvector generated always as (to_tsvector('simple', event_text)) stored;
create index timeline_events_text_search on timeline_events using gin (text_search);

-- The root observer's timeline is every event: its pages walk this index.
create index timeline_events_order on timeline_events (timeline_at desc, id desc);

-- An instance's events (the instanceId filter, diary compliance), and its activity changes: an
-- instance's `isActive` at a time is its last `instance_activity_changed` event before then.
create index timeline_events_instance on timeline_events (instance_id, timeline_at desc, id desc);
create index timeline_events_activity on timeline_events (instance_id, timeline_at desc, id desc)
  where event_type = 'instance_activity_changed';

-- From now on every change of `isActive` is an event. An instance switched off before this
-- migration gets one, at its last update, so its past reads inactive from then on.
insert into timeline_events (user_id, event_type, event_text, source, instance_id, observer_id,
                             persona_id, metadata, occurred_at, timeline_at)
select i.user_id, 'instance_activity_changed', format('Instance "%s" deactivated', i.name), i.source,
       i.id,
       case when i.level = 8 then i.id
            else coalesce(i.parent_instance_id, (select r.id from instances r where r.is_root)) end,
       i.persona_id,
       jsonb_build_object('isActive', false, 'backfilled', true,
                          'instance', jsonb_build_object('id', i.id, 'name', i.name, 'level', i.level,
                                                         'source', i.source, 'personaId', i.persona_id)),
       i.updated_at, i.updated_at
from instances i
where not i.is_active;
