// The observer: the `/observer` namespace (observers watch their timeline live) and
// `/api/observer/observer/<id>/…` (the unified timeline and its exports, reflections, the cycle,
// the summary and 5D navigation). The registry of instances and observers, and the timeline
// itself, are the timeline module's.
import type { AppPlugin } from '../../platform/http/types.js';
import { UnifiedTimeline, type TimelineService } from '../timeline/index.js';
import { ObserverReflections, type ReflectionsDeps } from './observer.reflection.js';
import { observerRoutes, type ObserverRoutesOptions } from './observer.routes.js';
import { ObserverService, type ObserverServiceDeps } from './observer.service.js';
import './observer.tables.js';

export {
  OBSERVER_NAMESPACE,
  observerRoom,
  observerSockets,
  type ObserverServerEvents,
  type ObserverSocketOptions,
} from './observer.socket.js';
export { observerNamespaceDoc } from './observer.events.js';
export { ObserverService, EXPORT_MAX } from './observer.service.js';
export { ObserverReflections } from './observer.reflection.js';
export type { ObserverSummary, Reflection } from './observer.schemas.js';

/** The module's HTTP door (mounted by app.ts). */
export const observerPlugin: AppPlugin<ObserverRoutesOptions> = async (app, opts) =>
  observerRoutes(app, opts);

export type ObserverModuleParts = Omit<ObserverServiceDeps, 'unified'> &
  Omit<ReflectionsDeps, 'observer' | 'unified' | 'timeline'> & {
    timeline: ReflectionsDeps['timeline'] & Pick<TimelineService, 'rootObserverId'>;
    /** The database's server-side cursor: the unified timeline's exports read through it. */
    openCursor: ConstructorParameters<typeof UnifiedTimeline>[1];
  };

/** Builds the observer: its unified timeline (the timeline module's reads, exports in batches
 * through a database cursor), summary and 5D navigation, reflections and the cycle. */
export function createObserverModule(p: ObserverModuleParts) {
  const { db, bus, log, timeline, memory } = p;
  const unifiedTimeline = new UnifiedTimeline(db, p.openCursor, timeline, { exportBatch: 500 });
  const observer = new ObserverService({
    db,
    bus,
    unified: unifiedTimeline,
    instances: p.instances,
    memory,
    inventory: p.inventory,
    assistantUserId: p.assistantUserId,
  });
  const observerReflections = new ObserverReflections({
    db,
    bus,
    log,
    observer,
    timeline,
    unified: unifiedTimeline,
    memory,
    models: p.models,
    assistantUserId: p.assistantUserId,
  });
  return { unifiedTimeline, observer, observerReflections };
}
