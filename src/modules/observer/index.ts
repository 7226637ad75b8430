import type { AppPlugin } from '../../platform/http/types.js';
import { observerRoutes } from './observer.routes.js';
import type { ObserverService } from './observer.service.js';

export { ObserverService } from './observer.service.js';
export {
  OBSERVER_NAMESPACE,
  observerRoom,
  observerSockets,
  type ObserverServerEvents,
  type ObserverSocketOptions,
} from './observer.socket.js';

/** The module's HTTP door (mounted by app.ts); its `/observer` namespace is `observerSockets`. */
export const observerPlugin: AppPlugin<{ observer: ObserverService }> = async (app, opts) =>
  observerRoutes(app, opts);
