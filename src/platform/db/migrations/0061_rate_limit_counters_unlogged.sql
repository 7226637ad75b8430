-- Rate-limit windows last a minute and are cheap to lose: an unlogged table writes no WAL, so a
-- hit (every chat message and auth request takes one) commits without waiting for a WAL flush.
-- The cost: after a database crash the table is empty, and a standby has no copy (after a
-- failover the windows start again).
alter table rate_limit_counters set unlogged;
