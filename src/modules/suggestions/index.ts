import type { Config } from '../../config.js';
import type { AppPlugin } from '../../platform/http/types.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { SuggestionJobs } from './suggestions.jobs.js';
import { suggestionsRoutes, type SuggestionsRoutesOptions } from './suggestions.routes.js';
import { SuggestionsService } from './suggestions.service.js';
import type { SuggestionsDeps } from './suggestions.types.js';
import './suggestions.tables.js';

export { SuggestionsService } from './suggestions.service.js';
export { SuggestionJobs, GENERATE_JOB } from './suggestions.jobs.js';
export type { SuggestionsDeps, SuggestionsOptions } from './suggestions.types.js';
export type { Suggestion } from './suggestions.schemas.js';
export type { AutoExecutionConfig } from './suggestions.rules.js';

/** The module's HTTP door (mounted by app.ts): suggestions per context, config, history. */
export const suggestionsPlugin: AppPlugin<SuggestionsRoutesOptions> = async (app, opts) =>
  suggestionsRoutes(app, opts);

/** Builds the suggestions: passes over the workflows (on GET, and a job enqueued with each
 * instance write) whose operations run through the workflow services. The contract's ttl is an
 * hour; a user causes at most as many intent calls as chat turns a minute. */
export function createSuggestionsModule(
  parts: SuggestionsDeps & { jobs: JobQueue },
  config: Pick<Config, 'limits'>,
) {
  const { jobs, ...deps } = parts;
  const suggestions = new SuggestionsService(deps, {
    ttlSeconds: 3600,
    intentCallsPerMinute: config.limits.chatPerMinute,
  });
  return { suggestions, suggestionJobs: new SuggestionJobs(jobs, suggestions) };
}
