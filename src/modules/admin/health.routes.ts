import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { DatabaseHealth } from '../../platform/db/health-monitor.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
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
      diskFull: z
        .boolean()
        .optional()
        .describe(
          'a write failed for lack of disk space (507 insufficient_storage) and no room has been seen since',
        ),
      migrations: migrationsSchema,
    }),
    uptimeSeconds: z.number(),
  })
  .meta({
    id: 'Health',
    examples: [
      {
        status: 'ok',
        version: '0.1.0',
        database: {
          kind: 'pglite',
          ok: true,
          probeAgeMs: 840,
          migrations: { applied: 25, pending: 0, latest: '0074_chat_platform_users' },
        },
        uptimeSeconds: 3600,
      },
    ],
  });

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
    rateLimitStore: z.enum(['database', 'redis', 'memory']),
  })
  .meta({
    id: 'AdminHealth',
    examples: [
      {
        status: 'ok',
        version: '0.1.0',
        database: {
          kind: 'postgres',
          ok: true,
          probeAgeMs: 512,
          migrations: { applied: 25, pending: 0, latest: '0074_chat_platform_users' },
        },
        uptimeSeconds: 86400,
        vector: { supported: true, mode: 'pgvector' },
        jobs: { running: true, queues: [{ name: 'memory.embed', queued: 0, active: 1, failed: 0 }] },
        models: { provider: 'openai-compatible', chatModel: 'gpt-4o-mini' },
        services: ['api', 'worker'],
        rateLimitStore: 'database',
      },
    ],
  });

export interface HealthRoutesOptions {
  /** The background database probe's latest answer. */
  health: { snapshot(): DatabaseHealth & { ageMs: number } };
  database: { kind: 'pglite' | 'postgres'; vector: boolean };
  /** The job queues' state. */
  jobs(): Promise<z.infer<typeof adminHealthSchema>['jobs']>;
  /** The model provider's and the memory embeddings' state. */
  models(): Promise<Record<string, unknown>>;
  /** Without pgvector: this process's sketch index (parts held, their rows and bytes). */
  sketchIndex(): { parts: number; rows: number; bytes: number } | undefined;
  /** This node's roles (SERVICES). */
  services: string[];
  rateLimitStore: CounterStore['kind'];
}

export function healthRoutes(app: App, opts: HealthRoutesOptions) {
  const started = Date.now();
  function basic() {
    const { ok, migrations, ageMs, diskFull } = opts.health.snapshot();
    return {
      status: ok && migrations.pending === 0 && !diskFull ? ('ok' as const) : ('degraded' as const),
      version: VERSION,
      database: {
        kind: opts.database.kind,
        ok,
        probeAgeMs: ageMs,
        ...(diskFull ? { diskFull } : {}),
        migrations,
      },
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
        description:
          "Liveness and readiness for load balancers: `ok` with the database probe's result and age. 503 with `degraded` when the database does not answer, its disk is full (`database.diskFull`: a write was answered 507) or migrations are pending (this node's code expects tables the database lacks); 200 again once the probe finds it answering and migrated. Public.",
        response: {
          200: healthSchema,
          503: {
            description:
              '`status` is `degraded` when the database does not answer, its disk is full or migrations are pending',
            content: { 'application/json': { schema: healthSchema } },
          },
        },
      },
    },
    async (_req, reply) => {
      const h = basic();
      return reply.status(h.status === 'ok' ? 200 : 503).send(h);
    },
  );

  app.get(
    '/api/admin/health',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Health with vector support, job queue and model provider status',
        description:
          "The health answer plus what an operator needs: the database engine and vector mode (pgvector or the sketch index), job queues, the model provider and embedding backlog, the rate-limit store and this node's services. Administrators only.",
        response: { 200: adminHealthSchema, ...problems(401, 403) },
      },
    },
    async () => {
      const sketchIndex = opts.sketchIndex();
      return {
        ...basic(),
        vector: {
          supported: opts.database.vector,
          mode: opts.database.vector ? ('pgvector' as const) : ('sketch-index' as const),
          ...(sketchIndex ? { sketchIndex } : {}),
        },
        jobs: await opts.jobs(),
        models: await opts.models(),
        services: opts.services,
        rateLimitStore: opts.rateLimitStore,
      };
    },
  );
}
