-- A claim on a chunk waiting for its embedding names the process holding it (a service_nodes
-- id): the claim is free once `claimed_until` passes, or as soon as its holder stops beating
-- (memory.embeddings.repository.ts). A claim without a holder (made before this migration) is
-- free.
alter table memory_embed_queue add column claimed_by uuid;
