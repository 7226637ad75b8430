import type { AppPlugin } from '../../platform/http/types.js';
import type { SyncService } from './sync.service.js';
import { syncRoutes } from './sync.routes.js';

export { SyncService, type MemoryReader } from './sync.service.js';

/** The module's HTTP door (mounted by app.ts). */
export const syncPlugin: AppPlugin<{ sync: SyncService }> = async (app, opts) => syncRoutes(app, opts);
