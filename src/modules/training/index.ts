import type { AppPlugin } from '../../platform/http/types.js';
import { trainingRoutes, type TrainingRoutesOptions } from './training.routes.js';
import './training.tables.js';

export { TrainingService } from './training.service.js';
export { TrainingJobs } from './training.jobs.js';
export { Extractor } from './training.extract.js';
export { OcrEngine } from './training.ocr.js';
export { trainingSockets, type TrainingServerEvents } from './training.socket.js';
export { TRAINING_JOB, type TrainingDeps, type TrainingLimits } from './training.types.js';
export type { TrainingJob, TrainingProgress } from './training.schemas.js';

/** The module's HTTP door (mounted by app.ts): /api/training/*, admins only. */
export const trainingPlugin: AppPlugin<TrainingRoutesOptions> = async (app, opts) =>
  trainingRoutes(app, opts);
export type { TrainingRoutesOptions as TrainingPluginOptions };
