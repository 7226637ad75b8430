import type { AppModule } from '../index.js';
import { memoryRoutes } from './memory.routes.js';
import './memory.tables.js';

export {
  MemoryService,
  EMBED_JOB,
  type AddMemoryInput,
  type ConversationContext,
  type ContextRequest,
  type ContextSlot,
  type GatherOptions,
  type NpcInfo,
  type RetrievedMemory,
  type SlotProvider,
} from './memory.service.js';
export { tierOf, SOURCE_TIER, MEMORY_SOURCES, type MemorySource, type MemoryTier } from './memory.rules.js';
export const memoryModule: AppModule = { name: 'memory', routes: memoryRoutes };
