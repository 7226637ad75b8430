import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { systemStats, type StatsSources } from './stats.service.js';

const count = z.number().int();
const statsSchema = z
  .object({
    windowHours: count,
    users: z.array(z.object({ role: z.string(), accountType: z.string(), count })),
    clientTypes: z
      .array(
        z.object({
          clientType: z.string(),
          sessions: count.describe('sign-in sessions in use in the window (signed in or refreshed)'),
          signIns: count.describe('sign-in sessions begun in the window'),
        }),
      )
      .describe(
        'Sign-in sessions per client type (the `clientType` of login, token and external sign-in; a session keeps it through its refreshes), every client type listed',
      ),
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
  .meta({
    id: 'SystemStats',
    examples: [
      {
        windowHours: 24,
        users: [{ role: 'carbon', accountType: 'public', count: 1250 }],
        clientTypes: [
          { clientType: 'web_portal', sessions: 610, signIns: 140 },
          { clientType: 'chat_platform', sessions: 0, signIns: 0 },
          { clientType: 'api', sessions: 12, signIns: 3 },
          { clientType: 'game_client', sessions: 95, signIns: 40 },
          { clientType: 'mobile', sessions: 0, signIns: 0 },
          { clientType: 'vr', sessions: 0, signIns: 0 },
          { clientType: 'ar', sessions: 0, signIns: 0 },
        ],
        memories: [
          { tier: 'shared', count: 48000 },
          { tier: 'world', count: 320 },
        ],
        conversations: 3100,
        messages: { total: 91000, recent: 2400, failed: 3 },
        timelineEvents: { total: 15000, recent: 410 },
        modelCalls: [
          {
            kind: 'chat',
            outcome: 'ok',
            calls: 2380,
            tokensIn: 2900000,
            tokensOut: 310000,
            avgLatencyMs: 820,
            p95LatencyMs: 1900,
          },
        ],
      },
    ],
  });

export function statsRoutes(app: App, { stats }: { stats: StatsSources }) {
  app.get(
    '/api/admin/stats',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'System statistics: accounts, sessions per client type, memories, chat, timeline and model usage (tokens, latency) over a window',
        description:
          'Counts over the last `hours`: accounts by role and type, sign-in sessions by client type (in use and begun in the window), memories by tier, conversations and messages, timeline events, and model usage (calls, tokens, latency) by purpose. Administrators only.',
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
