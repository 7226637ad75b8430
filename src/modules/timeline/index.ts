import './timeline.tables.js';

export {
  TimelineService,
  toEvent,
  toInstance,
  type AfterCommit,
  type RecordInput,
} from './timeline.service.js';
export * as instancesRepository from './timeline.repository.js';
export {
  timelineEventSchema,
  instanceSchema,
  instanceActivitySchema,
  instanceSourceSchema,
  jsonObject,
  INSTANCE_SOURCES,
} from './timeline.schemas.js';
export type { TimelineEvent, Instance, InstanceActivity } from './timeline.schemas.js';
