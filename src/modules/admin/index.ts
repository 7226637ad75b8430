import type { AppModule } from '../index.js';
import { healthRoutes } from './health.routes.js';

export const adminModule: AppModule = { name: 'admin', routes: healthRoutes };
