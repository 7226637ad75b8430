// Scheduled tasks (`/api/admin/scheduled-tasks`): the `scheduled_tasks` table over pg-boss
// schedules, the three kinds run by their owners' services (ports wired by deps.ts).
import type { AppPlugin } from '../../platform/http/types.js';
import { schedulerRoutes } from './scheduler.routes.js';
import type { SchedulerService } from './scheduler.service.js';
import './scheduler.tables.js';

export { SchedulerService, TASK_JOB, type TaskRunners } from './scheduler.service.js';

/** The module's HTTP door (mounted by app.ts). */
export const schedulerPlugin: AppPlugin<{ scheduler: SchedulerService }> = async (app, opts) =>
  schedulerRoutes(app, opts);
