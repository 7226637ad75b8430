import type { ColumnType } from 'kysely';
import type { CreatedAt, Generated, Json, UpdatedAt } from '../../platform/db/schema.js';
import type { MemorySource, MemoryTier } from './memory.rules.js';

export interface MemoriesTable {
  id: Generated<number>;
  user_id: number;
  content: string;
  source: MemorySource;
  tier: MemoryTier;
  metadata: Json;
  conversation_id: number | null;
  created_by_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface MemoryChunksTable {
  id: Generated<number>;
  memory_id: number;
  user_id: number;
  tier: MemoryTier;
  source: MemorySource;
  conversation_id: number | null;
  chunk_index: number;
  content: string;
  tsv: ColumnType<string, never, never>;
  embed_attempts: Generated<number>;
  embed_error: string | null;
}

/** One chunk's embedding (migration 0012), with the model and dimension that made it. */
export interface MemoryEmbeddingsTable {
  chunk_id: number;
  user_id: number;
  tier: MemoryTier;
  source: MemorySource;
  model: string;
  dim: number;
  /** `vector`, with pgvector only: without it the table holds the embedding's `sketch`, its int8
   * values (`embedding_i8`) and the writing transaction (`xid`) instead (migrations 0012–0017).
   * Written and read through the repository's SQL only. */
  embedding: ColumnType<unknown, never, never>;
  /** The chunk's keys, without pgvector only (migration 0017). */
  memory_id: number;
  chunk_index: number;
  conversation_id: number | null;
  embedded_at: CreatedAt;
}

/** Chunks waiting for their first embedding. */
export interface MemoryEmbedQueueTable {
  chunk_id: number;
  /** Until when a worker that sent the chunk to the model holds it (migration 0072); null or past:
   * free to claim. */
  claimed_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    memories: MemoriesTable;
    memory_chunks: MemoryChunksTable;
    memory_embeddings: MemoryEmbeddingsTable;
    memory_embed_queue: MemoryEmbedQueueTable;
  }
}
