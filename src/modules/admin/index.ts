import type { AppModule } from '../index.js';
import { healthRoutes } from './health.routes.js';
import { statsRoutes } from './stats.routes.js';

export const adminModule: AppModule = {
  name: 'admin',
  routes: (app, deps) => {
    healthRoutes(app, deps);
    statsRoutes(app, deps);
  },
};
