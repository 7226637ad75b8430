import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { AuditLog } from './audit.service.js';

const instant = z.iso.datetime({ offset: true });

const logsQuery = z.object({
  requestId: z.string().min(1).max(100).optional(),
  actorUserId: z.coerce.number().int().positive().optional(),
  method: z
    .string()
    .regex(/^[A-Za-z]{1,16}$/)
    .transform((m) => m.toUpperCase())
    .optional(),
  status: z.coerce.number().int().min(100).max(599).optional(),
  path: z.string().min(1).max(2048).optional().describe('a path prefix'),
  from: instant.optional().describe('inclusive'),
  to: instant.optional().describe('exclusive'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(200).optional(),
});

const logSchema = z
  .object({
    id: z.number().int(),
    at: z.iso.datetime(),
    requestId: z.string(),
    method: z.string(),
    path: z.string(),
    route: z.string().nullable(),
    status: z.number().int(),
    problemCode: z.string().nullable(),
    actorUserId: z.number().int().nullable(),
    actorKind: z.enum(['user', 'api_key', 'anonymous']),
    apiKeyId: z.number().int().nullable(),
    ip: z.string().nullable(),
    durationMs: z.number(),
  })
  .meta({
    id: 'AuditLogEntry',
    examples: [
      {
        id: 4812,
        at: '2025-05-01T09:30:00.000Z',
        requestId: 'req-7f3a2c',
        method: 'PATCH',
        path: '/api/admin/scheduled-tasks/6f1c2b9e-3d4a-4b5c-8e7f-9a0b1c2d3e4f',
        route: '/api/admin/scheduled-tasks/:id',
        status: 200,
        problemCode: null,
        actorUserId: 1,
        actorKind: 'user',
        apiKeyId: null,
        ip: '203.0.113.7',
        durationMs: 12.4,
      },
    ],
  });

export function auditRoutes(app: App, { audit }: { audit: AuditLog }) {
  app.get(
    '/api/admin/logs',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'The audit log, newest first: every write request and every request answered 401, 403 or 5xx (never bodies, headers or tokens)',
        description:
          'Administrators only. Entries newest first, filtered by request id, actor, method, status, path prefix and a time window (`from` inclusive, `to` exclusive); `limit` per page (50 by default, at most 200), the next page by `nextCursor`. 400 for a cursor not of this list or a `from` not before `to`.',
        querystring: logsQuery,
        response: {
          200: z.object({ logs: z.array(logSchema), nextCursor: z.string().nullable() }),
          ...problems(400, 401, 403),
        },
      },
    },
    async (req) => audit.list(req.query),
  );
}
