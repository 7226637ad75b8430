// Jobs as a unit of work's items (unit-of-work.ts): a write adds the jobs it causes, and at commit
// they are enqueued in the write's transaction, one pg-boss insert per queue and options, so they
// exist exactly when the write committed; this node's workers are woken once it has.
import type { Flusher, UnitOfWork } from '../db/unit-of-work.js';
import type { EnqueueOptions } from './job-options.js';
import type { JobQueue } from './queue.js';

export interface LaterJob {
  name: string;
  data: unknown;
  options?: EnqueueOptions | undefined;
}

declare module '../db/unit-of-work.js' {
  interface UnitOfWorkKinds {
    jobs: { item: LaterJob; result: void };
  }
}

/** Adds a job to the unit, enqueued when it flushes (awaiting the answer flushes now). */
export function enqueueLater(uow: UnitOfWork, name: string, data: unknown, options?: EnqueueOptions) {
  return uow.add('jobs', { name, data, options });
}

/** The jobs kind's flusher (startup/platform.ts defines it): the unit's jobs grouped by queue and options,
 * each group one insert (a keyed job one send), the groups sent together. */
export function flushJobs(queue: JobQueue): Flusher<'jobs'> {
  return async (uow, jobs) => {
    const groups = new Map<string, LaterJob[]>();
    for (const job of jobs) {
      const key = `${job.name}\u0000${JSON.stringify(job.options ?? {})}`;
      const group = groups.get(key) ?? [];
      group.push(job);
      groups.set(key, group);
    }
    for (const [, group] of groups) {
      const { name, options } = group[0]!;
      // A keyed job goes alone: pg-boss's send skips a duplicate, where its insert would fail.
      if (options?.singletonKey)
        for (const j of group) void uow.send(queue.enqueue(uow.trx, name, j.data, options));
      else
        void uow.send(
          queue.enqueueMany(
            uow.trx,
            name,
            group.map((j) => j.data),
            options,
          ),
        );
      if (!options?.startAfterSeconds) uow.afterCommit(() => queue.wake(name));
    }
    return jobs.map(() => undefined);
  };
}
