// `/api/admin/scheduled-tasks` (contract: "Admin zones"), admin only.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import type { SchedulerService } from './scheduler.service.js';

const tags = ['admin'];
const jsonObject = z.record(z.string(), z.unknown());
const admin = { auth: 'admin' as const };
const taskId = '6f1c2b9e-3d4a-4b5c-8e7f-9a0b1c2d3e4f';
const idParam = z.object({ id: z.uuid().meta({ examples: [taskId] }) });
const taskExample = {
  id: taskId,
  name: 'Nightly observer cycle',
  kind: 'observer_cycle',
  cron: '0 3 * * *',
  timezone: 'Europe/Paris',
  payload: { observerId: 3, hours: 24 },
  enabled: true,
  nextRunAt: '2025-05-02T01:00:00.000Z',
  lastRun: {
    jobId: '1f0c6a52-8d7e-4b3a-9c21-5e4d3b2a1f00',
    state: 'completed' as const,
    startedAt: '2025-05-01T01:00:00.120Z',
    finishedAt: '2025-05-01T01:00:04.870Z',
    error: null,
  },
  createdAt: '2025-04-20T08:00:00.000Z',
  updatedAt: '2025-04-20T08:00:00.000Z',
};

const taskSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: z.string(),
    cron: z.string(),
    timezone: z.string(),
    payload: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    nextRunAt: z.iso.datetime().nullable(),
    lastRun: z
      .object({
        jobId: z.string(),
        state: z.enum(['queued', 'running', 'completed', 'failed']),
        startedAt: z.iso.datetime().nullable(),
        finishedAt: z.iso.datetime().nullable(),
        error: z.string().nullable(),
      })
      .nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ScheduledTask', examples: [taskExample] });

const fields = {
  name: z.string().trim().min(1).max(200),
  cron: z.string().max(200).describe('5 fields: minute hour day-of-month month day-of-week'),
  timezone: z.string().max(100).describe('an IANA time zone; UTC by default'),
  payload: jsonObject.describe(
    "the kind's payload: observer_cycle { observerId, hours?, limit? }, diary_compliance { observerId, hours? }, maintenance_sweep {}",
  ),
  enabled: z.boolean(),
};
const createBody = z
  .object({
    name: fields.name,
    kind: z.string().max(100).describe('observer_cycle, diary_compliance or maintenance_sweep'),
    cron: fields.cron,
    timezone: fields.timezone.optional(),
    payload: fields.payload.optional(),
    enabled: fields.enabled.optional(),
  })
  .strict()
  .meta({
    examples: [
      {
        name: 'Nightly observer cycle',
        kind: 'observer_cycle',
        cron: '0 3 * * *',
        timezone: 'Europe/Paris',
        payload: { observerId: 3, hours: 24 },
      },
    ],
  });
const patchBody = z
  .object({
    name: fields.name.optional(),
    cron: fields.cron.optional(),
    timezone: fields.timezone.optional(),
    payload: fields.payload.optional(),
    enabled: fields.enabled.optional(),
  })
  .strict()
  .describe('every field but kind')
  .meta({ examples: [{ cron: '30 2 * * 1-5', enabled: false }] });

export function schedulerRoutes(app: App, { scheduler }: { scheduler: SchedulerService }) {
  const base = '/api/admin/scheduled-tasks';
  app.get(
    base,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Scheduled tasks and the kinds a task may have',
        description:
          'Administrators only. Every scheduled task, with its next run and the state of its last run, and the kinds a task may have (observer_cycle, diary_compliance, maintenance_sweep).',
        response: {
          200: z.object({ tasks: z.array(taskSchema), kinds: z.array(z.string()) }).meta({
            examples: [
              {
                tasks: [taskExample],
                kinds: ['observer_cycle', 'diary_compliance', 'maintenance_sweep'],
              },
            ],
          }),
          ...problems(401, 403),
        },
      },
    },
    async () => scheduler.list(),
  );
  app.post(
    base,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a scheduled task',
        description:
          "Administrators only. Creates a task of a kind with a 5-field cron expression, an IANA time zone (UTC by default) and the kind's payload; enabled by default, it is scheduled at once. Every problem of kind, cron, time zone and payload (an unknown observer too) is answered together as one 400.",
        body: createBody,
        response: { 201: taskSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await scheduler.create(req.body)),
  );
  app.get(
    `${base}/:id`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'A scheduled task',
        description:
          'Administrators only. One scheduled task, with its next run and the state of its last run; 404 for an unknown id.',
        params: idParam,
        response: { 200: taskSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => scheduler.get(req.params.id),
  );
  app.patch(
    `${base}/:id`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Change a scheduled task (not its kind)',
        description:
          'Administrators only. Changes the fields given (name, cron, time zone, payload, enabled) and reschedules the task (disabled: unscheduled). The result is checked as at creation (400 with every problem); 404 for an unknown id.',
        params: idParam,
        body: patchBody,
        response: { 200: taskSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => scheduler.patch(req.params.id, req.body),
  );
  app.delete(
    `${base}/:id`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a scheduled task',
        description:
          'Administrators only. Deletes the task and its schedule; a run already queued does nothing. 404 for an unknown id.',
        params: idParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await scheduler.remove(req.params.id);
      return reply.status(204).send(null);
    },
  );
  app.post(
    `${base}/:id/run`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Run a task now, enabled or not',
        description:
          "Administrators only. Queues one run of the task now, whether it is enabled or not, and answers the job's id (the run's state then shows as the task's `lastRun`). 404 for an unknown id.",
        params: idParam,
        response: {
          202: z
            .object({ taskId: z.uuid(), jobId: z.string() })
            .meta({ examples: [{ taskId, jobId: '1f0c6a52-8d7e-4b3a-9c21-5e4d3b2a1f00' }] }),
          ...problems(400, 401, 403, 404),
        },
      },
    },
    async (req, reply) => reply.status(202).send(await scheduler.runNow(req.params.id)),
  );
}
