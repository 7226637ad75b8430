import type { AppModule } from '../index.js';
import { syncRoutes } from './sync.routes.js';

export { SyncService, type MemoryReader } from './sync.service.js';
export const syncModule: AppModule = { name: 'sync', routes: syncRoutes };
