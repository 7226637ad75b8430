import type { AppPlugin } from '../../platform/http/types.js';
import { suggestionsRoutes, type SuggestionsRoutesOptions } from './suggestions.routes.js';
import './suggestions.tables.js';

export { SuggestionsService } from './suggestions.service.js';
export { SuggestionJobs, GENERATE_JOB } from './suggestions.jobs.js';
export type { SuggestionsDeps, SuggestionsOptions } from './suggestions.types.js';
export type { Suggestion } from './suggestions.schemas.js';
export type { AutoExecutionConfig } from './suggestions.rules.js';

/** The module's HTTP door (mounted by app.ts): suggestions per context, config, history. */
export const suggestionsPlugin: AppPlugin<SuggestionsRoutesOptions> = async (app, opts) =>
  suggestionsRoutes(app, opts);
