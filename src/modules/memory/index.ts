import type { AppPlugin } from '../../platform/http/types.js';
import { memoryRoutes } from './memory.routes.js';
import type { MemoryService } from './memory.service.js';
import './memory.tables.js';

export { MemoryService, EMBED_JOB } from './memory.service.js';
export { toSearchResult } from './memory.mapping.js';
export type {
  AddMemoryInput,
  ConversationContext,
  GatherOptions,
  NpcInfo,
  RetrievedMemory,
} from './memory.mapping.js';
export {
  chunkText,
  tierOf,
  SOURCE_TIER,
  MEMORY_SOURCES,
  type MemorySource,
  type MemoryTier,
} from './memory.rules.js';
export type { MemoryDto } from './memory.schemas.js';

/** The module's HTTP door (mounted by app.ts). */
export const memoryPlugin: AppPlugin<{ memory: MemoryService }> = async (app, opts) =>
  memoryRoutes(app, opts);
