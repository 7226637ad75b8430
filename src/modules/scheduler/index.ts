// Scheduled tasks (`/api/admin/scheduled-tasks`): the `scheduled_tasks` table over pg-boss
// schedules, the three kinds run by their owners' services (ports wired by deps.ts).
import type { Config } from '../../config.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { schedulerRoutes } from './scheduler.routes.js';
import { SchedulerService, type SchedulerDeps } from './scheduler.service.js';
import './scheduler.tables.js';

export { SchedulerService, TASK_JOB, type TaskRunners } from './scheduler.service.js';

/** The module's HTTP door (mounted by app.ts). */
export const schedulerPlugin: AppPlugin<{ scheduler: SchedulerService }> = async (app, opts) =>
  schedulerRoutes(app, opts);

export interface SchedulerModuleParts extends Omit<SchedulerDeps, 'runners'> {
  /** The assistant's own user (the characters module's): scheduled tasks act as it. */
  assistantUserId: () => Promise<number>;
  observerCycle: (
    actor: UserPrincipal,
    observerId: number,
    input: { hours: number; limit: number },
  ) => Promise<unknown>;
  diaryCompliance: (observerId: number, hours: number) => Promise<unknown>;
  maintenanceSweep: () => Promise<unknown>;
}

/** Builds the scheduler: each kind of task runs through its owner's service (the ports), as the
 * assistant's own user, over the last 24 hours unless the task says otherwise. */
export function createSchedulerModule(
  p: SchedulerModuleParts,
  config: Pick<Config, 'assistantName'>,
): SchedulerService {
  const { db, jobs, log, isObserver } = p;
  return new SchedulerService({
    db,
    jobs,
    log,
    isObserver,
    runners: {
      observer_cycle: async ({ observerId, hours, limit }) =>
        p.observerCycle(await assistantPrincipal(p.assistantUserId, config.assistantName), observerId, {
          hours: hours ?? 24,
          limit: limit ?? 100,
        }),
      diary_compliance: ({ observerId, hours }) => p.diaryCompliance(observerId, hours ?? 24),
      maintenance_sweep: () => p.maintenanceSweep(),
    },
  });
}

/** Who a scheduled task acts as: the assistant's own user, with admin rights (an observer cycle's
 * events name it). */
async function assistantPrincipal(
  assistantUserId: () => Promise<number>,
  name: string,
): Promise<UserPrincipal> {
  return {
    kind: 'user',
    id: await assistantUserId(),
    role: 'silicon',
    accountType: 'npc',
    name,
    admin: true,
    jti: 'scheduled-task',
    exp: Number.MAX_SAFE_INTEGER,
    sid: undefined,
    clientType: undefined,
  };
}
