// Worker start-up: the maintenance jobs' definition, then (unless a CLI command runs without the
// queue) the job queue, the memory embedder, the schedules, the workflow runs, the chat-platform
// bot and last the job workers. What each part needs at shutdown is registered in `closers`.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { JobQueue } from '../platform/jobs/queue.js';
import { defineMaintenanceJobs, scheduleMaintenance, type Sweepers } from '../modules/admin/index.js';
import {
  createChatPlatformBot,
  type ChatPlatformChat,
  type ChatPlatformCommands,
} from '../modules/chat-platform/index.js';
import type { MemoryService } from '../modules/memory/index.js';
import type { SchedulerService } from '../modules/scheduler/index.js';
import type { TrainingJobs } from '../modules/training/index.js';
import type { WorkflowRunJobs, WorkflowsService } from '../modules/workflows/index.js';

/** What `Deps.close` runs, in order: a part registers with `unshift`, so the last one started is
 * the first one stopped. */
export type Closers = (() => Promise<unknown>)[];

/** Runs every closer in order, once (they are taken out of the list); a failing one is logged
 * (when a start failed, the error that stopped it is the one reported) and the rest still run. */
export async function closeAll(closers: Closers, log?: Logger): Promise<void> {
  for (const fn of closers.splice(0)) {
    try {
      await fn();
    } catch (err) {
      log?.warn({ err }, 'error during shutdown');
    }
  }
}

export interface WorkerParts {
  config: Pick<Config, 'services' | 'scheduler' | 'chatPlatform'>;
  log: Logger;
  jobs: JobQueue;
  sweepers: Sweepers;
  memory: Pick<MemoryService, 'start'>;
  scheduler: Pick<SchedulerService, 'reconcile'>;
  workflows: Pick<WorkflowsService, 'usePorts'>;
  workflowRunJobs: Pick<WorkflowRunJobs, 'start' | 'stop'>;
  trainingJobs: Pick<TrainingJobs, 'stop'>;
  chatPlatformCommands: ChatPlatformCommands;
  chatPlatformChat: ChatPlatformChat;
}

/** Runs after the first-start seeding. `queue: false` (CLI commands) skips the queue and the bot. */
export async function startWorkers(p: WorkerParts, queue: boolean, closers: Closers): Promise<void> {
  defineMaintenanceJobs(p.jobs, p.sweepers);
  if (queue) await startQueue(p, closers);
  // Before the queue stops (closers run last-registered first): this node's training jobs are
  // aborted and retried elsewhere or after the restart; their worker threads end.
  closers.unshift(() => p.trainingJobs.stop());
}

async function startQueue(p: WorkerParts, closers: Closers): Promise<void> {
  const { config, jobs } = p;
  const worker = config.services.includes('worker');
  await jobs.open({
    work: worker,
    schedule: worker,
    scheduleIntervalSeconds: config.scheduler.intervalSeconds,
  });
  closers.unshift(() => jobs.stop());
  await p.memory.start();
  if (worker) await scheduleMaintenance(jobs);
  if (worker) await p.scheduler.reconcile();
  // Before the queue stops: this node's runs release their leases and their jobs are retried.
  closers.unshift(() => p.workflowRunJobs.stop());
  if (worker) await p.workflowRunJobs.start();
  // The chat-platform bot, only with CHAT_PLATFORM_BOT_TOKEN: it posts workflow notifications
  // from every node, and receives slash commands on worker nodes. It connects in the
  // background: the platform being unreachable never stops the service from starting.
  const bot = await createChatPlatformBot({
    token: config.chatPlatform.botToken,
    gateway: worker,
    commands: p.chatPlatformCommands,
    chat: p.chatPlatformChat,
    log: p.log,
  });
  if (bot) {
    p.workflows.usePorts({ notify: (n) => bot.notify(n) });
    closers.unshift(() => bot.stop());
    bot.start().catch((err: unknown) => p.log.error({ err }, 'the chat-platform bot did not start'));
  }
  // The job workers last: each one's first fetch would otherwise wait in front of the statements
  // above on the embedded database's one connection.
  if (worker) await jobs.work();
}
