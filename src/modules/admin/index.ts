import type { AppPlugin } from '../../platform/http/types.js';
import { healthRoutes, type HealthRoutesOptions } from './health.routes.js';
import { statsRoutes } from './stats.routes.js';
import type { StatsSources } from './stats.service.js';

export {
  defineMaintenanceJobs,
  runSweeps,
  scheduleMaintenance,
  SWEEP_JOB,
  SWEEP_SCHEDULE,
  type Sweepers,
} from './maintenance.jobs.js';
export { systemStats, type StatsSources } from './stats.service.js';

export interface AdminPluginOptions {
  health: HealthRoutesOptions;
  stats: StatsSources;
}

/** Health (public and admin) and system statistics (mounted by app.ts). */
export const adminPlugin: AppPlugin<AdminPluginOptions> = async (app, opts) => {
  healthRoutes(app, opts.health);
  statsRoutes(app, opts);
};
