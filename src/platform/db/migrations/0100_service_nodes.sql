-- The processes using the database, each with the time it last said it was alive
-- (platform/db/liveness.ts): a claim naming its holder is held while that holder beats, so a
-- process that dies (kill -9, a lost machine) leaves its claims free within a short timeout
-- instead of a long lease. Unlogged: after a database crash every process reconnects and beats
-- again, and a row lost with it only frees that process's claims early.
create unlogged table service_nodes (
  id uuid primary key,
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);
