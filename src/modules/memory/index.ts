import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../platform/db/database.js';
import type { AppPlugin } from '../../platform/http/types.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { MemoryAccounts } from './memory.mapping.js';
import { memoryRoutes } from './memory.routes.js';
import { MemoryService } from './memory.service.js';
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
  OBSERVER_ONLY_SOURCES,
  readableInTurn,
  type MemorySource,
  type MemoryTier,
} from './memory.rules.js';
export type { MemoryDto } from './memory.schemas.js';
export type { ExchangeInput } from './memory.exchange.js';

/** The module's HTTP door (mounted by app.ts). */
export const memoryPlugin: AppPlugin<{ memory: MemoryService }> = async (app, opts) =>
  memoryRoutes(app, opts);

export interface MemoryModuleParts extends MemoryAccounts {
  db: Db;
  jobs: JobQueue;
  models: ModelGateway;
  log: Logger;
  /** This process's liveness id: the embedding queue's claims name it. */
  claimHolder: string;
  /** pgvector is present (the database's capability). */
  vector: boolean;
}

/** Builds the memory service (its embedding job defined) from its parts and the settings. World
 * memories belong to the assistant's own user (`assistantUserId`, the characters module's). */
export function createMemoryModule(
  parts: MemoryModuleParts,
  config: Pick<Config, 'limits' | 'memory'>,
): MemoryService {
  const { db, jobs, models, log, claimHolder, vector } = parts;
  return new MemoryService(
    db,
    jobs,
    models,
    log,
    {
      claimHolder,
      vector,
      maxContentBytes: config.limits.memoryContentBytes,
      chunkSize: config.memory.chunkSize,
      chunkOverlap: config.memory.chunkOverlap,
      embedBatch: config.memory.embedBatch,
      sketchIndexBytes: config.memory.sketchCacheBytes,
      reconcile: config.memory.reconcile,
    },
    { assistantUserId: () => parts.assistantUserId(), identity: (id) => parts.identity(id) },
  );
}
