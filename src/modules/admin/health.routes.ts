import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { Deps } from '../../deps.js';
import { VERSION } from '../../version.js';

const migrationsSchema = z.object({
  applied: z.number().int(),
  pending: z.number().int(),
  latest: z.string().nullable(),
});
const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    database: z.object({
      kind: z.enum(['pglite', 'postgres']),
      ok: z.boolean(),
      probeAgeMs: z.number().describe('age of the background database probe this answer is based on'),
      migrations: migrationsSchema,
    }),
    uptimeSeconds: z.number(),
  })
  .meta({ id: 'Health' });

const adminHealthSchema = healthSchema
  .extend({
    vector: z.object({
      supported: z.boolean(),
      mode: z.enum(['pgvector', 'sketch-index']),
      /** Without pgvector: this process's sketch index (parts held, their rows and bytes). */
      sketchIndex: z.object({ parts: z.number(), rows: z.number(), bytes: z.number() }).optional(),
    }),
    jobs: z.object({
      running: z.boolean(),
      queues: z.array(
        z.object({ name: z.string(), queued: z.number(), active: z.number(), failed: z.number() }),
      ),
    }),
    models: z.record(z.string(), z.unknown()),
    services: z.array(z.string()),
    rateLimitStore: z.enum(['database', 'redis']),
  })
  .meta({ id: 'AdminHealth' });

export function healthRoutes(app: App, deps: Deps) {
  const started = Date.now();
  function basic() {
    const { ok, migrations, ageMs } = deps.health.snapshot();
    return {
      status: ok && migrations.pending === 0 ? ('ok' as const) : ('degraded' as const),
      version: VERSION,
      database: { kind: deps.database.kind, ok, probeAgeMs: ageMs, migrations },
      uptimeSeconds: Math.round((Date.now() - started) / 1000),
    };
  }

  app.get(
    '/api/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        summary: 'Liveness and readiness',
        response: { 200: healthSchema, 503: healthSchema },
      },
    },
    async (_req, reply) => {
      const h = basic();
      return reply.status(h.database.ok ? 200 : 503).send(h);
    },
  );

  app.get(
    '/api/admin/health',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Health with vector support, job queue and model provider status',
        response: { 200: adminHealthSchema, ...problems(401, 403) },
      },
    },
    async () => ({
      ...basic(),
      vector: {
        supported: deps.database.capabilities.vector,
        mode: deps.database.capabilities.vector ? ('pgvector' as const) : ('sketch-index' as const),
        ...(deps.services.memory.sketches ? { sketchIndex: deps.services.memory.sketches.stats() } : {}),
      },
      jobs: await deps.jobs.status(),
      models: await deps.modelStatus(),
      services: deps.config.services,
      rateLimitStore: deps.redis ? ('redis' as const) : ('database' as const),
    }),
  );
}
