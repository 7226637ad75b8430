import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { systemStats, type StatsSources } from './stats.service.js';

const count = z.number().int();
const statsSchema = z
  .object({
    windowHours: count,
    users: z.array(z.object({ role: z.string(), accountType: z.string(), count })),
    memories: z.array(z.object({ tier: z.string(), count })),
    conversations: count,
    messages: z.object({ total: count, recent: count, failed: count }),
    timelineEvents: z.object({ total: count, recent: count }),
    modelCalls: z.array(
      z.object({
        kind: z.string(),
        outcome: z.string(),
        calls: count,
        tokensIn: count,
        tokensOut: count,
        avgLatencyMs: z.number(),
        p95LatencyMs: z.number(),
      }),
    ),
  })
  .meta({ id: 'SystemStats' });

export function statsRoutes(app: App, { stats }: { stats: StatsSources }) {
  app.get(
    '/api/admin/stats',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'System statistics: accounts, memories, chat, timeline and model usage (tokens, latency) over a window',
        querystring: z.object({
          hours: z.coerce
            .number()
            .int()
            .min(1)
            .max(24 * 90)
            .default(24),
        }),
        response: { 200: statsSchema, ...problems(400, 401, 403) },
      },
    },
    async (req) => systemStats(stats, req.query.hours),
  );
}
