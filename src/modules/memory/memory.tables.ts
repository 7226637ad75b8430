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
  /** `vector` (pgvector) or `real[]` (exact scan): written through the repository's SQL only. */
  embedding: ColumnType<unknown, never, never>;
  embedding_model: string | null;
  embedding_dim: number | null;
  embedded_at: Date | null;
  embed_attempts: Generated<number>;
  embed_error: string | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    memories: MemoriesTable;
    memory_chunks: MemoryChunksTable;
  }
}
