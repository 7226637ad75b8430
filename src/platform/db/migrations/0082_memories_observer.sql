-- Memories about an observer (reflections; `metadata.observerId`), newest first up to a time:
-- 5D reconstruction and the latest reflection.
create index memories_observer on memories ((metadata ->> 'observerId'), created_at desc, id desc)
  where (metadata ->> 'observerId') is not null;
