-- The timeline's full-text index without GIN's pending list. With `fastupdate` (PostgreSQL's
-- default) an insert puts its entries on a list, and the insert that overflows the list
-- (gin_pending_list_limit, 4 MB: some 20,000 events) merges it into the index: 90-120 ms on the
-- development machine, while the node's one ingest writer and every ingest queued behind it wait;
-- and every full-text search of the timeline reads the list whole. Without it each insert updates
-- the index itself, a few hundredths of a millisecond more (bench/RESULTS.md, 2026-11-27).
alter index timeline_events_text_search set (fastupdate = off);
select gin_clean_pending_list('timeline_events_text_search'::regclass);
