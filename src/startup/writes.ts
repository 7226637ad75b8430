// What a write's unit of work flushes (platform/db/unit-of-work.ts) beyond the platform's own kinds
// (jobs, notices: startup/platform.ts), and who sees each flush in the write's transaction: the
// webhooks' deliveries for the timeline's events, the suggestions' pass for the workflow
// instances written.
import type { UnitOfWorkRegistry } from '../platform/db/unit-of-work.js';
import type { SuggestionJobs } from '../modules/suggestions/index.js';
import type { TimelineService } from '../modules/timeline/index.js';
import type { WebhooksService } from '../modules/webhooks/index.js';
import { flushInstancesWritten } from '../modules/workflows/index.js';

export function defineWrites(
  writes: UnitOfWorkRegistry,
  p: { timeline: TimelineService; webhooks: WebhooksService; suggestionJobs: SuggestionJobs },
): void {
  writes.define('timeline', (uow, inputs) => p.timeline.flush(uow, inputs));
  writes.onFlush('timeline', (uow, events) => p.webhooks.onRecorded(uow, events));
  writes.define('instanceWritten', flushInstancesWritten);
  writes.onFlush('instanceWritten', (uow, ids) => p.suggestionJobs.onInstancesWritten(uow, ids));
}
