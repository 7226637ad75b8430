import type { AppModule } from '../index.js';
import { observerRoutes } from './observer.routes.js';
import { observerSockets } from './observer.socket.js';

export { ObserverService } from './observer.service.js';
export { OBSERVER_NAMESPACE, observerRoom } from './observer.socket.js';
export const observerModule: AppModule = {
  name: 'observer',
  routes: observerRoutes,
  sockets: observerSockets,
};
