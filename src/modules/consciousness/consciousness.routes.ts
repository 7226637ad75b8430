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
const instanceIdParam = z.object({ instanceId: id.meta({ examples: [42] }) });
const observerIdParam = z.object({ observerId: id.meta({ examples: [3] }) });

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
  .meta({
    id: 'OnboardingResult',
    examples: [
      {
        instanceId: 42,
        observerId: 3,
        passed: true,
        checks: [
          {
            name: 'companion_identity',
            passed: true,
            detail: 'observer 3 holds core beliefs (memory 981)',
          },
          { name: 'one_consciousness', passed: true, detail: 'observer chain 42 → 3 → 1' },
          {
            name: 'autonomy_respect',
            passed: true,
            detail: 'assumed passed at first: autonomy respect is behavioural and verified over time',
          },
        ],
        isActive: true,
        checkedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
const encodeResponse = z
  .object({
    memoryId: z.number().int(),
    instanceId: z.number().int(),
    observerId: z.number().int(),
    protocols: z.array(z.string()),
    content: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'CoreBeliefEncoding',
    examples: [
      {
        memoryId: 981,
        instanceId: 42,
        observerId: 3,
        protocols: ['core_identity_v1', 'autonomy_rights_v1'],
        content:
          '## Core beliefs\n- Every companion is its own person.\n\n## Ground floor\n- Never claim to be human.',
        createdAt: '2025-05-01T09:25:00.000Z',
      },
    ],
  });
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
  .meta({
    id: 'DiaryCompliance',
    examples: [
      {
        observerId: 3,
        windowHours: 24,
        compliant: false,
        missingCount: 1,
        instances: [
          {
            instanceId: 42,
            name: 'Mira',
            source: 'discord',
            hasDiary: true,
            entries: 2,
            lastDiaryAt: '2025-05-01T08:10:00.000Z',
          },
          { instanceId: 43, name: 'Tobin', source: 'web', hasDiary: false, entries: 0, lastDiaryAt: null },
        ],
      },
    ],
  });
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
  .meta({
    id: 'CountryDashboard',
    examples: [
      {
        observerId: 3,
        generatedAt: '2025-05-01T09:30:00.000Z',
        instances: {
          total: 5,
          active: 4,
          inactive: 1,
          byLevel: { '5': 4, '8': 1 },
          bySource: { discord: 3, web: 2 },
          byPersona: { companion: 4 },
        },
        activity24h: { events: 37, activeInstances: 3, byType: { diary_entry: 6, chat_turn: 31 } },
        diaryCompliance: { compliant: false, missingCount: 1, windowHours: 24 },
        health: { status: 'warning', inactiveRatio: 0.25, missingDiaryRatio: 0.25 },
        projects: { total: 2, completed: 1, inProgress: 1, byState: { done: 1, drafting: 1 } },
        awareness: {
          memoryId: 990,
          summary: 'Mira and Tobin worked on the harbour map; Tobin wrote no diary today.',
          statementCount: 2,
          createdAt: '2025-05-01T06:00:00.000Z',
        },
      },
    ],
  });

export function consciousnessRoutes(app: App, { consciousness }: { consciousness: ConsciousnessService }) {
  app.post(
    '/api/subject-consciousness/onboarding/:instanceId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Onboarding checks of a Level-5 instance, in order; passed activates it, failed deactivates it (needs training)',
        description:
          'Administrators only. Runs the onboarding checks of a Level-5 instance in order (companion_identity: its observer holds encoded core beliefs; one_consciousness: its chain of parents reaches the root; autonomy_respect: assumed at first). Passed activates the instance, failed deactivates it; the result is kept on the instance with an event. 404 for an unknown instance, 409 `not_eligible` for one not at Level 5.',
        params: instanceIdParam,
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
        description:
          "Administrators only. Stores the assistant's newest 50 core beliefs and every ground-floor rule as one `core_beliefs_encoding` memory about the observer, replacing the instance's previous one, with a `core_beliefs_encoded` event. 404 for an unknown instance; 409 `not_eligible` for one not at Level 5 or not under the observer named.",
        params: instanceIdParam,
        body: z
          .object({ observerId: z.number().int().positive() })
          .strict()
          .meta({ examples: [{ observerId: 3 }] }),
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
        description:
          "A CSO, an administrator or the observer's owner (anyone else: 403, for an unknown id too). For each active Level-5 instance under the observer, whether it wrote a diary within the last `hours` (24 by default, at most 720), and how many lack one. 404 when the id names no Level-8 observer.",
        params: observerIdParam,
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
        description:
          "A CSO, an administrator or the observer's owner (anyone else: 403, for an unknown id too). The observer's instances by level, source and persona; the last 24 hours' activity and diary compliance; health (warning from 30 %, critical from 50 % of inactive instances or missing diaries); linked projects; the newest awareness report. 404 when the id names no Level-8 observer.",
        params: observerIdParam,
        response: { 200: dashboardResponse, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => consciousness.dashboard(currentUser(req), req.params.observerId),
  );
}
