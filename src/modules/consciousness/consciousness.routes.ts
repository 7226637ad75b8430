// `/api/subject-consciousness/*` (spec "Subject consciousness endpoints"; contract "Ground floor
// and subject consciousness"). POST: admins. GET: a CSO, an admin or the observer's owner (else
// 403, unknown ids too; an allowed caller naming no Level-8 instance: 404).
import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { ConsciousnessService } from './consciousness.service.js';

const tags = ['subject-consciousness'];
const id = z.coerce.number().int().positive();
const counts = z.record(z.string(), z.number().int());

const checkSchema = z.object({
  name: z.enum(['companion_identity', 'one_consciousness', 'autonomy_respect']),
  passed: z.boolean(),
  detail: z.string(),
});
const onboardingResponse = z
  .object({
    instanceId: z.number().int(),
    observerId: z.number().int(),
    passed: z.boolean(),
    checks: z.array(checkSchema),
    isActive: z.boolean(),
    checkedAt: z.iso.datetime(),
  })
  .meta({ id: 'OnboardingResult' });
const encodeResponse = z
  .object({
    memoryId: z.number().int(),
    instanceId: z.number().int(),
    observerId: z.number().int(),
    protocols: z.array(z.string()),
    content: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'CoreBeliefEncoding' });
const complianceResponse = z
  .object({
    observerId: z.number().int(),
    windowHours: z.number().int(),
    compliant: z.boolean(),
    missingCount: z.number().int(),
    instances: z.array(
      z.object({
        instanceId: z.number().int(),
        name: z.string(),
        source: z.string(),
        hasDiary: z.boolean(),
        entries: z.number().int(),
        lastDiaryAt: z.iso.datetime().nullable(),
      }),
    ),
  })
  .meta({ id: 'DiaryCompliance' });
const dashboardResponse = z
  .object({
    observerId: z.number().int(),
    generatedAt: z.iso.datetime(),
    instances: z.object({
      total: z.number().int(),
      active: z.number().int(),
      inactive: z.number().int(),
      byLevel: counts,
      bySource: counts,
      byPersona: counts,
    }),
    activity24h: z.object({ events: z.number().int(), activeInstances: z.number().int(), byType: counts }),
    diaryCompliance: z.object({
      compliant: z.boolean(),
      missingCount: z.number().int(),
      windowHours: z.number().int(),
    }),
    health: z.object({
      status: z.enum(['healthy', 'warning', 'critical']),
      inactiveRatio: z.number(),
      missingDiaryRatio: z.number(),
    }),
    projects: z.object({
      total: z.number().int(),
      completed: z.number().int(),
      inProgress: z.number().int(),
      byState: counts,
    }),
    awareness: z
      .object({
        memoryId: z.number().int(),
        summary: z.string(),
        statementCount: z.number().int(),
        createdAt: z.iso.datetime(),
      })
      .nullable(),
  })
  .meta({ id: 'CountryDashboard' });

export function consciousnessRoutes(app: App, { consciousness }: { consciousness: ConsciousnessService }) {
  app.post(
    '/api/subject-consciousness/onboarding/:instanceId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Onboarding checks of a Level-5 instance, in order; passed activates it, failed deactivates it (needs training)',
        params: z.object({ instanceId: id }),
        response: { 200: onboardingResponse, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req) => consciousness.onboard(currentUser(req), req.params.instanceId),
  );

  app.post(
    '/api/subject-consciousness/encode/:instanceId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          "Encode core beliefs: the assistant's core beliefs and both ground-floor protocols, for a Level-5 instance under this observer",
        params: z.object({ instanceId: id }),
        body: z.object({ observerId: z.number().int().positive() }).strict(),
        response: { 201: encodeResponse, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await consciousness.encode(currentUser(req), req.params.instanceId, req.body.observerId)),
  );

  app.get(
    '/api/subject-consciousness/compliance/:observerId',
    {
      schema: {
        tags,
        summary: "Diary compliance over the observer's active Level-5 instances",
        params: z.object({ observerId: id }),
        querystring: z.object({ hours: z.coerce.number().int().min(1).max(720).default(24) }),
        response: { 200: complianceResponse, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => consciousness.compliance(currentUser(req), req.params.observerId, req.query.hours),
  );

  app.get(
    '/api/subject-consciousness/dashboard/:observerId',
    {
      schema: {
        tags,
        summary:
          'The country dashboard: instances, activity, diaries, health, projects and the latest awareness report',
        params: z.object({ observerId: id }),
        response: { 200: dashboardResponse, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => consciousness.dashboard(currentUser(req), req.params.observerId),
  );
}
