-- Chunks waiting for an embedding are claimed by the worker that sends them to the model (the
-- embedding job on any node, or a chat turn's batched query request) until `claimed_until`: no
-- other worker picks them meanwhile, so each is sent once. The worker's write removes the entry;
-- a failed call clears the claim; a crashed worker's claims lapse, and the next job run takes
-- them (memory.embedding.ts). A lapsed or absent claim is free.
alter table memory_embed_queue add column claimed_until timestamptz;
