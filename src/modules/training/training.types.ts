// The training module's shared types: what its service and job are given, its job's name, its
// limits and its event.
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.js';
import type { EventBus } from '../../platform/events/bus.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { CharactersService } from '../characters/index.js';
import type { ConversationsService } from '../chat/index.js';
import type { MemoryService } from '../memory/index.js';
import type { Extractor } from './training.extract.js';
import type { TrainingProgress } from './training.schemas.js';

declare module '../../platform/events/bus.js' {
  interface AppEvents {
    /** A training job changed; sent as `trainingProgress` to the sockets of the admin who started it. */
    'training.progress': { userId: number; progress: TrainingProgress };
  }
}

/** The job that runs a training job (training.jobs.ts defines it). */
export const TRAINING_JOB = 'training.ingest';

export interface TrainingLimits {
  /** Bytes of a training file (TRAINING_FILE_LIMIT). */
  fileBytes: number;
  /** Pages of a PDF (TRAINING_MAX_PAGES). */
  maxPages: number;
  /** Characters of a file's text kept (TRAINING_MAX_CHARS). */
  maxChars: number;
  /** Bytes of a screenshot (TRAINING_IMAGE_LIMIT). */
  imageBytes: number;
  /** Bytes of one memory (MEMORY_MAX_CONTENT). */
  memoryBytes: number;
}

export interface TrainingDeps {
  db: Db;
  jobs: JobQueue;
  models: ModelGateway;
  bus: EventBus;
  log: Logger;
  memory: Pick<MemoryService, 'addMemories' | 'byIds' | 'retrieve'>;
  characters: Pick<CharactersService, 'getNpc'>;
  conversations: Pick<ConversationsService, 'resolve' | 'create' | 'appendAssistantMessages'>;
  extractor: Extractor;
}

export interface IncomingTrainingFile {
  name: string | undefined;
  data: Buffer;
}
