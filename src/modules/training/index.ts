import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { Extractor } from './training.extract.js';
import { TrainingJobs } from './training.jobs.js';
import { OcrEngine } from './training.ocr.js';
import { trainingRoutes, type TrainingRoutesOptions } from './training.routes.js';
import { TrainingService } from './training.service.js';
import type { TrainingDeps } from './training.types.js';
import './training.tables.js';

export { TrainingService } from './training.service.js';
export { TrainingJobs } from './training.jobs.js';
export { Extractor } from './training.extract.js';
export { OcrEngine } from './training.ocr.js';
export { trainingSockets, type TrainingServerEvents } from './training.socket.js';
export { trainingEventDocs } from './training.events.js';
export { TRAINING_JOB, type TrainingDeps, type TrainingLimits } from './training.types.js';
export type { TrainingJob, TrainingProgress } from './training.schemas.js';

/** The module's HTTP door (mounted by app.ts): /api/training/*, admins only. */
export const trainingPlugin: AppPlugin<TrainingRoutesOptions> = async (app, opts) =>
  trainingRoutes(app, opts);
export type { TrainingRoutesOptions as TrainingPluginOptions };

/** Builds NPC training: documents are read in worker threads, screenshots by tesseract.js (its own
 * thread, the shipped language data unpacked once into a cache under the system's temporary
 * directory); the job stores the memories through the memory module. */
export function createTrainingModule(
  parts: Omit<TrainingDeps, 'extractor'>,
  config: Pick<Config, 'training' | 'limits'>,
) {
  const limits = {
    fileBytes: config.training.fileBytes,
    maxPages: config.training.maxPages,
    maxChars: config.training.maxChars,
    imageBytes: config.training.imageBytes,
    memoryBytes: config.limits.memoryContentBytes,
  };
  const deps: TrainingDeps = { ...parts, extractor: new Extractor() };
  const training = new TrainingService(deps, limits);
  const ocr = new OcrEngine({ cacheDir: join(tmpdir(), 'assistant-platform-ocr'), idleMs: 60_000 });
  const trainingJobs = new TrainingJobs(deps, training, ocr, limits);
  return { training, trainingJobs };
}
