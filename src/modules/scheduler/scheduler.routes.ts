// `/api/admin/scheduled-tasks` (contract: "Admin zones"), admin only.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import type { SchedulerService } from './scheduler.service.js';

const tags = ['admin'];
const jsonObject = z.record(z.string(), z.unknown());
const admin = { auth: 'admin' as const };
const idParam = z.object({ id: z.uuid() });

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
  .meta({ id: 'ScheduledTask' });

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
  .strict();
const patchBody = z
  .object({
    name: fields.name.optional(),
    cron: fields.cron.optional(),
    timezone: fields.timezone.optional(),
    payload: fields.payload.optional(),
    enabled: fields.enabled.optional(),
  })
  .strict()
  .describe('every field but kind');

export function schedulerRoutes(app: App, { scheduler }: { scheduler: SchedulerService }) {
  const base = '/api/admin/scheduled-tasks';
  app.get(
    base,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Scheduled tasks and the kinds a task may have',
        response: {
          200: z.object({ tasks: z.array(taskSchema), kinds: z.array(z.string()) }),
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
        params: idParam,
        response: { 202: z.object({ taskId: z.uuid(), jobId: z.string() }), ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(202).send(await scheduler.runNow(req.params.id)),
  );
}
