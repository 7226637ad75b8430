// Scheduled tasks (contract: "Admin zones"): our rows over pg-boss schedules. A task's schedule is
// keyed by its id on one queue; pg-boss's cron pass, claimed by one node per interval, files one
// job per occurrence across every node. The run writes its own last-run record. Schedules are
// created and removed outside any transaction (pg-boss uses a connection of its own, and PGlite
// has one), after our row's change committed, from the row as it then stands; every worker node
// reconciles the schedules with the rows when it starts.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { transaction, type Db } from '../../platform/db/database.js';
import { notFound, validationFailed, zodErrors, type FieldProblem } from '../../platform/http/problem.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import * as repo from './scheduler.repository.js';
import {
  cronShapeProblem,
  isKind,
  isTimeZone,
  KIND_NAMES,
  TASK_KINDS,
  type TaskKind,
} from './scheduler.rules.js';

export const TASK_JOB = 'scheduled-tasks.run';

export type TaskRunners = {
  [K in TaskKind]: (payload: z.output<(typeof TASK_KINDS)[K]>) => Promise<unknown>;
};

export interface SchedulerDeps {
  db: Db;
  jobs: JobQueue;
  log: Logger;
  /** Is this id a Level-8 instance (an observer)? */
  isObserver: (id: number) => Promise<boolean>;
  runners: TaskRunners;
}

export interface TaskInput {
  name: string;
  kind: string;
  cron: string;
  timezone?: string | undefined;
  payload?: Record<string, unknown> | undefined;
  enabled?: boolean | undefined;
}

export type TaskPatch = Partial<Omit<TaskInput, 'kind'>>;

export interface TaskView {
  id: string;
  name: string;
  kind: string;
  cron: string;
  timezone: string;
  payload: Record<string, unknown>;
  enabled: boolean;
  nextRunAt: string | null;
  lastRun: {
    jobId: string;
    state: 'queued' | 'running' | 'completed' | 'failed';
    startedAt: string | null;
    finishedAt: string | null;
    error: string | null;
  } | null;
  createdAt: string;
  updatedAt: string;
}

const jobData = z.object({ taskId: z.uuid(), manual: z.boolean().optional() });

export class SchedulerService {
  constructor(private readonly d: SchedulerDeps) {
    d.jobs.define({
      name: TASK_JOB,
      schema: jobData,
      // A failed run is reported (lastRun) and the next occurrence runs again.
      retryLimit: 0,
      handler: (data, ctx) => this.run(data.taskId, data.manual === true, ctx.jobId),
    });
  }

  readonly kinds = KIND_NAMES;

  async list(): Promise<{ tasks: TaskView[]; kinds: string[] }> {
    return { tasks: (await repo.list(this.d.db)).map((r) => this.view(r)), kinds: [...KIND_NAMES] };
  }

  async get(id: string): Promise<TaskView> {
    const row = await repo.find(this.d.db, id);
    if (!row) throw notFound('scheduled task');
    return this.view(row);
  }

  async create(input: TaskInput): Promise<TaskView> {
    const timezone = input.timezone ?? 'UTC';
    const payload = await this.validate({
      kind: input.kind,
      cron: input.cron,
      timezone,
      payload: input.payload ?? {},
    });
    const row = await repo.insert(this.d.db, {
      id: randomUUID(),
      name: input.name,
      kind: input.kind,
      cron: input.cron.trim(),
      timezone,
      payload,
      enabled: input.enabled ?? true,
    });
    try {
      await this.sync(row.id);
    } catch (err) {
      await repo.remove(this.d.db, row.id);
      throw err;
    }
    return this.view(row);
  }

  async patch(id: string, changes: TaskPatch): Promise<TaskView> {
    // Checked before the row is locked: the check reads the registry (is the observer one?) on
    // its own connection, which the embedded database's single connection would give only after
    // the transaction, so that a check inside it waited for itself until "busy".
    const current = await repo.find(this.d.db, id);
    if (!current) throw notFound('scheduled task');
    const cron = changes.cron?.trim() ?? current.cron;
    const timezone = changes.timezone ?? current.timezone;
    const payload = await this.validate({
      kind: current.kind,
      cron,
      timezone,
      payload: changes.payload ?? current.payload,
    });
    await transaction(this.d.db, async ({ trx }) => {
      if (!(await repo.lock(trx, id))) throw notFound('scheduled task');
      // Only the fields given: a field changed meanwhile by another request stays as it made it.
      await repo.update(trx, id, {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        ...(changes.cron !== undefined ? { cron } : {}),
        ...(changes.timezone !== undefined ? { timezone } : {}),
        ...(changes.payload !== undefined ? { payload } : {}),
      });
    });
    await this.sync(id);
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    if (!(await repo.remove(this.d.db, id))) throw notFound('scheduled task');
    await this.d.jobs.unschedule(TASK_JOB, id);
  }

  /** `POST …/<id>/run`: a job now, enabled or not; its row notes it queued in the same transaction. */
  async runNow(id: string): Promise<{ taskId: string; jobId: string }> {
    const jobId = await transaction(this.d.db, async ({ trx }) => {
      if (!(await repo.lock(trx, id))) throw notFound('scheduled task');
      const jobId = (await this.d.jobs.enqueue(trx, TASK_JOB, { taskId: id, manual: true }))!;
      await repo.noteQueued(trx, id, jobId);
      return jobId;
    });
    this.d.jobs.wake(TASK_JOB);
    return { taskId: id, jobId };
  }

  /** Worker nodes at start: every enabled row has its schedule, and no schedule outlives its row. */
  async reconcile(): Promise<void> {
    const rows = await repo.list(this.d.db);
    const enabled = new Set(rows.filter((r) => r.enabled).map((r) => r.id));
    for (const row of rows) await this.apply(row);
    for (const s of await this.d.jobs.schedules(TASK_JOB))
      if (!enabled.has(s.key)) await this.d.jobs.unschedule(TASK_JOB, s.key);
  }

  /** The schedule as the row now stands (after its change committed). */
  private async sync(id: string): Promise<void> {
    const row = await repo.find(this.d.db, id);
    if (row) await this.apply(row);
    else await this.d.jobs.unschedule(TASK_JOB, id);
  }

  private apply(row: repo.TaskRow): Promise<void> {
    return row.enabled
      ? this.d.jobs.schedule(TASK_JOB, row.id, row.cron, row.timezone, { taskId: row.id })
      : this.d.jobs.unschedule(TASK_JOB, row.id);
  }

  /** Every problem of a task's kind, cron, zone and payload (an unknown observer too) as one 400;
   * the payload as its kind reads it. */
  private async validate(t: {
    kind: string;
    cron: string;
    timezone: string;
    payload: Record<string, unknown>;
  }): Promise<Record<string, unknown>> {
    const errors: FieldProblem[] = [];
    const shape = cronShapeProblem(t.cron);
    if (shape) errors.push({ path: 'cron', message: shape });
    else
      try {
        this.d.jobs.nextRuns(t.cron.trim(), 'UTC');
      } catch (err) {
        errors.push({ path: 'cron', message: `not a valid cron expression: ${(err as Error).message}` });
      }
    if (!isTimeZone(t.timezone))
      errors.push({ path: 'timezone', message: 'not an IANA time zone (such as UTC or Europe/Paris)' });
    let payload: Record<string, unknown> = t.payload;
    if (!isKind(t.kind)) errors.push({ path: 'kind', message: `one of ${KIND_NAMES.join(', ')}` });
    else {
      const parsed = TASK_KINDS[t.kind].safeParse(t.payload);
      if (!parsed.success) errors.push(...zodErrors(parsed.error, 'payload'));
      else {
        payload = parsed.data;
        const observerId = (parsed.data as { observerId?: number }).observerId;
        if (observerId !== undefined && !(await this.d.isObserver(observerId)))
          errors.push({ path: 'payload.observerId', message: `no observer ${observerId}` });
      }
    }
    if (errors.length > 0) throw validationFailed(errors);
    return payload;
  }

  /** One run of a task (its job): noted running, then completed or failed with the error. */
  private async run(taskId: string, manual: boolean, jobId: string): Promise<void> {
    const task = await repo.find(this.d.db, taskId);
    // Deleted meanwhile; or disabled after its occurrence was filed (run-now runs anyway).
    if (!task || (!manual && !task.enabled) || !isKind(task.kind)) return;
    await repo.noteRunning(this.d.db, taskId, jobId);
    try {
      await this.runKind(task.kind, task.payload);
      await repo.noteFinished(this.d.db, taskId, jobId, 'completed', null);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await repo.noteFinished(this.d.db, taskId, jobId, 'failed', message.slice(0, 2000));
      throw err;
    }
  }

  private runKind<K extends TaskKind>(kind: K, payload: unknown): Promise<unknown> {
    const runner = this.d.runners[kind] as (p: unknown) => Promise<unknown>;
    return runner(TASK_KINDS[kind].parse(payload));
  }

  private view(r: repo.TaskRow): TaskView {
    let nextRunAt: string | null = null;
    if (r.enabled)
      try {
        nextRunAt = this.d.jobs.nextRuns(r.cron, r.timezone)[0]?.toISOString() ?? null;
      } catch {
        nextRunAt = null;
      }
    return {
      id: r.id,
      name: r.name,
      kind: r.kind,
      cron: r.cron,
      timezone: r.timezone,
      payload: r.payload,
      enabled: r.enabled,
      nextRunAt,
      lastRun:
        r.last_job_id && r.last_state
          ? {
              jobId: r.last_job_id,
              state: r.last_state,
              startedAt: r.last_started_at?.toISOString() ?? null,
              finishedAt: r.last_finished_at?.toISOString() ?? null,
              error: r.last_error,
            }
          : null,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    };
  }
}
