import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';
import { MEMORY_SOURCES, MEMORY_TIERS } from './memory.rules.js';

const id = z.coerce
  .number()
  .int()
  .positive()
  .max(Number.MAX_SAFE_INTEGER)
  .meta({ examples: [1024] });
export const memoryIdParam = z.object({ id });
export const sourceSchema = z.enum(MEMORY_SOURCES);

// spec: MemoryMetadata (all optional); `yexianInstanceId` is named `primaryInstanceId` here.
// Other keys are kept as given (clients attach their own context), within a size bound.
export const memoryMetadataSchema = z
  .object({
    conversationId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    fileContext: z.string().max(20_000).optional(),
    visionContext: z.string().max(20_000).optional(),
    uploadContextId: z.string().max(200).optional(),
    playerName: z.string().max(200).optional(),
    npcName: z.string().max(200).optional(),
    primaryInstanceId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    personaId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .catchall(z.unknown())
  .refine((m) => JSON.stringify(m).length <= 64 * 1024, {
    message: 'metadata must serialise to at most 64 KiB',
  })
  .meta({ id: 'MemoryMetadata' });
export type MemoryMetadata = z.infer<typeof memoryMetadataSchema>;

export const memorySchema = z
  .object({
    id: z.number().int(),
    userId: z
      .number()
      .int()
      .describe('the owner: the player (shared), the character (core tier) or the assistant (world)'),
    content: z.string(),
    source: sourceSchema,
    tier: z.enum(MEMORY_TIERS),
    metadata: z
      .record(z.string(), z.unknown())
      .describe(
        'free-form; a chat exchange has conversationId, playerName, npcName and npcUserId. A memory a later one superseded has supersededBy (its id, or null), supersededAt and supersededReason (superseded, updated, deleted or duplicate): it is kept and listed but no longer retrieved; remainderOf names the superseded memory a remainder keeps the rest of',
      ),
    conversationId: z.number().int().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({
    id: 'Memory',
    examples: [
      {
        id: 1024,
        userId: 42,
        content: 'Ada prefers short answers and is afraid of the sea.',
        source: 'shared',
        tier: 'shared',
        metadata: { conversationId: 12, playerName: 'Ada' },
        conversationId: 12,
        createdAt: '2025-05-01T09:30:00.000Z',
        updatedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type MemoryDto = z.infer<typeof memorySchema>;

export const createMemoryBody = z
  .object({
    content: z.string().describe('at most MEMORY_MAX_CONTENT bytes (default 32 KiB), not blank'),
    source: sourceSchema,
    metadata: memoryMetadataSchema.optional(),
    userId: id
      .optional()
      .describe('admins only: the owner (ignored for world, which belongs to the assistant)'),
  })
  .strict()
  .meta({
    examples: [
      {
        content: 'Ada prefers short answers and is afraid of the sea.',
        source: 'shared',
        metadata: { conversationId: 12, playerName: 'Ada' },
      },
    ],
  });

export const searchQuery = z.object({
  query: z.string().max(2000).optional(),
  userId: id.optional(),
  npcUserId: id.optional(),
  source: sourceSchema.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(10),
  conversationId: id.optional().describe('boosts memories of this conversation (beyond the contract)'),
});

export const searchResultSchema = z.object({
  id: z.number().int(),
  userId: z.number().int(),
  content: z.string(),
  source: sourceSchema,
  similarity: z.number().min(0).max(1).nullable().describe('fused relevance in [0, 1]; null without a query'),
  createdAt: z.iso.datetime(),
});
export const searchResponse = z.object({ memories: z.array(searchResultSchema) });

// A deep OFFSET costs a long scan: paging stops at a million.
const page = pageFields({ maxOffset: 1_000_000 });
export const adminListQuery = z.object({ userId: id.optional(), source: sourceSchema.optional(), ...page });
export const ownListQuery = z.object({ source: sourceSchema.optional(), ...page });
export const listResponse = z.object({
  memories: z.array(memorySchema),
  ...pageMeta,
});

export const patchMemoryBody = z
  .object({
    content: z.string().optional(),
    metadata: memoryMetadataSchema.optional().describe('replaces the metadata as a whole'),
  })
  .strict()
  .refine((b) => b.content !== undefined || b.metadata !== undefined, {
    message: 'give content, metadata or both',
  })
  .meta({ examples: [{ content: 'Ada prefers short answers; she has made peace with the sea.' }] });
