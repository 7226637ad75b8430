// The observer: the `/observer` namespace (observers watch their timeline live) and
// `/api/observer/observer/<id>/…` (the unified timeline and its exports, reflections, the cycle,
// the summary and 5D navigation). The registry of instances and observers, and the timeline
// itself, are the timeline module's.
import type { AppPlugin } from '../../platform/http/types.js';
import { observerRoutes, type ObserverRoutesOptions } from './observer.routes.js';
import './observer.tables.js';

export {
  OBSERVER_NAMESPACE,
  observerRoom,
  observerSockets,
  type ObserverServerEvents,
  type ObserverSocketOptions,
} from './observer.socket.js';
export { ObserverService, EXPORT_MAX } from './observer.service.js';
export { ObserverReflections } from './observer.reflection.js';
export type { ObserverSummary, Reflection } from './observer.schemas.js';

/** The module's HTTP door (mounted by app.ts). */
export const observerPlugin: AppPlugin<ObserverRoutesOptions> = async (app, opts) =>
  observerRoutes(app, opts);
export { observerNamespaceDoc } from './observer.events.js';
