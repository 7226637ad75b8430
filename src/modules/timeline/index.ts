import type { AppPlugin } from '../../platform/http/types.js';
import { instancesRoutes } from './instances.routes.js';
import type { InstancesService } from './instances.service.js';
import './timeline.tables.js';

export { TimelineService, toEvent, toInstance, type RecordInput } from './timeline.service.js';
export { InstancesService } from './instances.service.js';
export {
  UnifiedTimeline,
  type Counts,
  type ObserverFigures,
  type TimelineExport,
  type TimelinePage,
} from './unified.service.js';
export type { TimelineFilter, TimelineOrder } from './unified.rules.js';
export { ACTIVITY_CHANGED_EVENT, REFLECTION_EVENT, SERVICE_EVENT_TYPES } from './timeline.rules.js';
export {
  timelineEventSchema,
  timelineEventExample,
  instanceSchema,
  instanceActivitySchema,
  instanceSourceSchema,
  jsonObject,
  INSTANCE_SOURCES,
} from './timeline.schemas.js';
export type { TimelineEvent, Instance, InstanceActivity } from './timeline.schemas.js';

/** The instance registry's HTTP door (`/api/admin/instances`, mounted by app.ts). */
export const timelinePlugin: AppPlugin<{ instances: InstancesService }> = async (app, opts) =>
  instancesRoutes(app, opts);
