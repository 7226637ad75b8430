// The memory module's shapes (what callers pass and get back) and the mapping of rows to them.
import type * as repo from './memory.repository.js';
import { tierOf, type MemorySource, type MemoryTier } from './memory.rules.js';
import type { MemoryDto } from './memory.schemas.js';

export interface MemoryServiceOptions {
  /** pgvector present (`vector` columns) or the exact scan over `real[]`. */
  vector: boolean;
  maxContentBytes: number;
  chunkSize: number;
  chunkOverlap: number;
  embedBatch: number;
  /** This process's liveness id (platform/db/liveness.ts): the embedding queue's claims name it. */
  claimHolder: string;
  /** Without pgvector: bytes of sketches the process keeps for ranking (memory.sketch-index.ts). */
  sketchIndexBytes: number;
  /** MEMORY_RECONCILE: how a new exchange is reconciled with what is stored (memory.exchange.ts). */
  reconcile: 'model' | 'rules' | 'off';
}

/** Who the accounts are: the assistant (characters, its one source) and any user (users). */
export interface MemoryAccounts {
  assistantUserId(): Promise<number>;
  identity(id: number): Promise<{ role: string; name: string } | undefined>;
}

export interface Caller {
  id: number;
  admin: boolean;
}

export interface AddMemoryInput {
  userId: number;
  content: string;
  source: MemorySource;
  metadata?: Record<string, unknown> | undefined;
  /** spec: addMemory conversationId; defaults to metadata.conversationId. */
  conversationId?: number | undefined;
  createdBy?: number | undefined;
}

export interface RetrievedMemory {
  id: number;
  userId: number;
  content: string;
  source: MemorySource;
  tier: MemoryTier;
  conversationId: number | null;
  similarity: number | null;
  createdAt: Date;
}

// spec: "Conversation context (internal shape returned by context gathering)".
export interface NpcInfo {
  name: string;
  description: string;
  assistant_user_id: number;
}
export interface ConversationContext {
  playerState: unknown;
  playerQuests: unknown;
  playerInventory: unknown;
  npcInfo: NpcInfo;
  memoryContext: { worldContext: string; assistantContext: string; personalContext: string };
  systemWideKnowledge?: unknown;
  /** Beyond the spec: the retrieved memories behind memoryContext (prompt grounding, offline chat). */
  memories: RetrievedMemory[];
}

export interface GatherOptions {
  /** A query embedding the caller already made or is making (with the gateway's current
   * embedding model); resolving to undefined means full text only. */
  queryEmbedding?: number[] | Promise<number[] | undefined> | undefined;
  /** Memories per tier in the context strings. */
  perTier?: { world?: number; assistant?: number; personal?: number };
  /** What the caller knows of the NPC, instead of reading the NPC's name. */
  npcInfo?: NpcInfo | Promise<NpcInfo> | undefined;
  /** Every speaker of a scene (the NPC first): each one's core tier is retrieved. */
  npcUserIds?: number[] | undefined;
  /** The speaker's reach into the player's memories (Scope.conversationIds); absent: all of them
   * (the assistant's own turns). */
  conversationIds?: number[] | undefined;
}

export function toDto(m: repo.MemoryRow): MemoryDto {
  return {
    id: m.id,
    userId: m.user_id,
    content: m.content,
    source: m.source,
    tier: m.tier,
    metadata: m.metadata,
    conversationId: m.conversation_id,
    createdAt: m.created_at.toISOString(),
    updatedAt: m.updated_at.toISOString(),
  };
}

export function toSearchResult(m: RetrievedMemory) {
  return {
    id: m.id,
    userId: m.userId,
    content: m.content,
    source: m.source,
    similarity: m.similarity,
    createdAt: m.createdAt.toISOString(),
  };
}

/** What addMemories answers: the rows as written (the same values a read would give). */
export function dtos(list: repo.NewMemory[], ids: number[], at: Date): MemoryDto[] {
  const stamp = at.toISOString();
  return list.map((m, i) => ({
    id: ids[i]!,
    userId: m.userId,
    content: m.content,
    source: m.source,
    tier: m.tier,
    // As jsonb keeps it: JSON values only.
    metadata: JSON.parse(JSON.stringify(m.metadata)) as Record<string, unknown>,
    conversationId: m.conversationId,
    createdAt: stamp,
    updatedAt: stamp,
  }));
}

export function retrieved(m: repo.RetrievalRow, similarity: number | null): RetrievedMemory {
  return {
    id: m.id,
    userId: m.user_id,
    content: m.content,
    source: m.source,
    tier: m.tier,
    conversationId: m.conversation_id,
    similarity,
    createdAt: m.created_at,
  };
}

/** A memory's row as written: its tier from its source, its conversation from the input or its
 * metadata. */
export function newMemory(input: AddMemoryInput): repo.NewMemory {
  const metadata = input.metadata ?? {};
  return {
    userId: input.userId,
    content: input.content,
    source: input.source,
    tier: tierOf(input.source),
    metadata,
    conversationId:
      input.conversationId ?? (typeof metadata.conversationId === 'number' ? metadata.conversationId : null),
    createdBy: input.createdBy ?? null,
  };
}
