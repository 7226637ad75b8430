// Requests and answers of the observer (contract: "Observer") and the `/observer` handshake.
import { z } from 'zod';
import { instanceSchema, jsonObject, timelineEventSchema } from '../timeline/index.js';

/** Observers one `/observer` socket may watch at most. */
export const MAX_WATCHED_OBSERVERS = 20;

const observerIdField = z.coerce.number().int().positive();

/** `/observer` handshake fields: `auth: { token, observerId }`, or `observerIds` for several
 * observers on one connection (a parent and its child: each event once). */
export const observerHandshakeFields = z.object({
  observerId: observerIdField.optional().describe('the observer to watch'),
  observerIds: z
    .array(observerIdField)
    .min(1)
    .max(MAX_WATCHED_OBSERVERS)
    .optional()
    .describe(`several observers to watch on this connection (at most ${MAX_WATCHED_OBSERVERS})`),
});

/** The handshake as checked: at least one observer named; the observers named, once each. */
export const observerHandshake = observerHandshakeFields
  .refine((h) => h.observerId !== undefined || h.observerIds !== undefined, {
    message: 'name the observer to watch: observerId, or observerIds for several',
    path: ['observerId'],
  })
  .transform((h) => [
    ...new Set([...(h.observerId === undefined ? [] : [h.observerId]), ...(h.observerIds ?? [])]),
  ]);

export const observerIdParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .describe('the observer: a Level-8 instance')
    .meta({ examples: [3] }),
});

/** `GET /api/observer/observers`: the observers the caller may read, by id. */
export const observersResponse = z.object({ observers: z.array(instanceSchema) }).meta({
  examples: [
    {
      observers: [
        {
          id: 3,
          name: 'Coast watch',
          level: 8,
          personaId: null,
          source: 'portal',
          parentInstanceId: null,
          stateMachineInstanceId: null,
          channelId: null,
          userId: 42,
          isActive: true,
          lastSeenAt: null,
          metadata: {},
          isRoot: false,
          createdAt: '2025-05-01T06:00:00.000Z',
        },
      ],
    },
  ],
});

/** ISO 8601 with `Z` or an offset. */
const instant = z.iso.datetime({ offset: true });

/** A list parameter: repeated (`?eventType=a&eventType=b`) or comma-separated (`a,b`), any of. */
function anyOf<O>(item: z.ZodType<O, string>, description: string) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((v) =>
      (Array.isArray(v) ? v : [v])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    )
    .pipe(z.array(item).max(50))
    .optional()
    .describe(description);
}

const filterFields = {
  eventType: anyOf(z.string().max(100), 'event types, any of (repeat or comma-separate)'),
  source: anyOf(z.string().max(100), 'sources, any of'),
  personaId: anyOf(z.coerce.number<string>().int().positive(), 'persona ids, any of'),
  instanceId: z.coerce.number().int().positive().optional(),
  userId: z.coerce.number().int().positive().optional(),
  q: z
    .string()
    .max(200)
    .transform((s) => s.trim() || undefined)
    .optional()
    .describe("full text on eventText (websearch_to_tsquery('simple')): every word, any case"),
  from: instant.optional().describe('timelineAt ≥ from (inclusive)'),
  to: instant.optional().describe('timelineAt < to (exclusive)'),
  order: z.enum(['asc', 'desc']).default('desc').describe('on (timelineAt, id)'),
};

const fromBeforeTo = (q: { from?: string | undefined; to?: string | undefined }) =>
  q.from === undefined || q.to === undefined || Date.parse(q.from) < Date.parse(q.to);
const fromBeforeToIssue = { message: 'from must be before to', path: ['from'] };

export const timelineQuery = z
  .object({
    ...filterFields,
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(500).optional().describe("the previous page's nextCursor"),
    export: z
      .enum(['json', 'csv'])
      .optional()
      .describe(
        'the whole filtered timeline in order (≤ 10,000 events), streamed; limit and cursor do not apply',
      ),
  })
  .refine(fromBeforeTo, fromBeforeToIssue);
export type TimelineQuery = z.output<typeof timelineQuery>;

export const paginatedQuery = z
  .object({
    ...filterFields,
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(200).default(50),
  })
  .refine(fromBeforeTo, fromBeforeToIssue);
export type PaginatedQuery = z.output<typeof paginatedQuery>;

export const timelinePageResponse = z.object({
  events: z.array(timelineEventSchema),
  nextCursor: z.string().nullable(),
});

export const paginatedResponse = z.object({
  events: z.array(timelineEventSchema),
  page: z.number().int(),
  pageSize: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});

export const reflectionBody = z
  .strictObject({
    hours: z.number().int().min(1).max(720).default(24).describe('the window: the last hours'),
    limit: z.number().int().min(1).max(200).default(100).describe('its newest events at most'),
  })
  .default({ hours: 24, limit: 100 })
  .meta({ examples: [{ hours: 24, limit: 100 }] });
export type ReflectionInput = z.output<typeof reflectionBody>;

/** What a reflection looks like (the OpenAPI and AsyncAPI documents' example). */
export const reflectionExample = {
  memoryId: 812,
  observerId: 3,
  text: 'A calm day at the harbour: two trades and a finished quest; the lighthouse shard was quiet after dusk.',
  eventCount: 14,
  fromTimelineAt: '2025-05-01T06:02:11.000Z',
  toTimelineAt: '2025-05-01T09:30:00.000Z',
  offline: false,
  createdAt: '2025-05-01T09:31:05.000Z',
};

export const reflectionSchema = z
  .object({
    memoryId: z.number().int(),
    observerId: z.number().int(),
    text: z.string(),
    eventCount: z.number().int(),
    fromTimelineAt: z.iso.datetime(),
    toTimelineAt: z.iso.datetime(),
    offline: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Reflection', examples: [reflectionExample] });
export type Reflection = z.infer<typeof reflectionSchema>;

export const reflectionResponse = z.object({
  reflection: reflectionSchema.nullable(),
  eventCount: z.number().int(),
});

export const metaStateSchema = z
  .object({
    cycles: z.number().int(),
    lastCycleAt: z.iso.datetime().nullable(),
    lastCycleOutcome: z.enum(['completed', 'failed']).nullable(),
    lastReflectionId: z.number().int().nullable(),
    lastReflectionAt: z.iso.datetime().nullable(),
    awareness: z.object({
      instances: z.number().int(),
      activeInstances: z.number().int(),
      eventsInWindow: z.number().int(),
    }),
  })
  .meta({ id: 'ObserverMetaState' });
export type MetaState = z.infer<typeof metaStateSchema>;

const stepSchema = z.object({
  name: z.enum(['gather', 'reflect', 'store', 'meta_state']),
  outcome: z.enum(['ok', 'skipped', 'failed']),
  detail: z.string(),
});
export type CycleStep = z.infer<typeof stepSchema>;

export const cycleResponse = z.object({
  observerId: z.number().int(),
  outcome: z.enum(['completed', 'failed']),
  steps: z.array(stepSchema),
  reflection: reflectionSchema.nullable(),
  metaState: metaStateSchema,
});
export type CycleResult = z.infer<typeof cycleResponse>;

const counts = z.record(z.string(), z.number().int()).describe('counts keyed by value ("none" for null)');

const metaStateExample = {
  cycles: 12,
  lastCycleAt: '2025-05-01T09:31:05.000Z',
  lastCycleOutcome: 'completed' as const,
  lastReflectionId: 812,
  lastReflectionAt: '2025-05-01T09:31:05.000Z',
  awareness: { instances: 4, activeInstances: 3, eventsInWindow: 57 },
};

/** What a summary looks like (the OpenAPI and AsyncAPI documents' example). */
export const summaryExample = {
  observerId: 3,
  generatedAt: '2025-05-01T09:31:05.000Z',
  windowHours: 24,
  instances: {
    total: 4,
    active: 3,
    inactive: 1,
    byLevel: { '5': 3, '8': 1 },
    bySource: { game_client: 2, portal: 2 },
    byPersona: { '2': 2, none: 2 },
  },
  events: {
    total: 1890,
    inWindow: 57,
    bySource: { game_client: 41, portal: 16 },
    byType: { quest_completed: 9, trade: 30, diary_entry: 3, instance_activity_changed: 1, note: 14 },
    byLevel: { '5': 50, '8': 7 },
    byPersona: { '2': 41, none: 16 },
  },
  diaryCompliance: { compliant: false, missingCount: 1, windowHours: 24 },
  metaState: metaStateExample,
};

export const summaryQuery = z.object({ hours: z.coerce.number().int().min(1).max(720).default(24) });

export const summarySchema = z
  .object({
    observerId: z.number().int(),
    generatedAt: z.iso.datetime(),
    windowHours: z.number().int(),
    instances: z.object({
      total: z.number().int(),
      active: z.number().int(),
      inactive: z.number().int(),
      byLevel: counts,
      bySource: counts,
      byPersona: counts,
    }),
    events: z.object({
      total: z.number().int(),
      inWindow: z.number().int(),
      bySource: counts,
      byType: counts,
      byLevel: counts,
      byPersona: counts,
    }),
    diaryCompliance: z.object({
      compliant: z.boolean(),
      missingCount: z.number().int(),
      windowHours: z.number().int(),
    }),
    metaState: metaStateSchema,
  })
  .meta({ id: 'ObserverSummary', examples: [summaryExample] });
export type ObserverSummary = z.infer<typeof summarySchema>;

/** `at`: required, ISO 8601 with `Z` or an offset. */
const atField = instant.describe('ISO 8601 with Z or an offset; a future time is now');

export const stateQuery = z.object({
  at: atField,
  events: z.coerce.number().int().min(1).max(200).default(20),
  userId: z.coerce.number().int().positive().optional(),
});

const economyStateSchema = z.object({
  userId: z.number().int(),
  energy_coins: z.number().int(),
  items: z.array(z.object({ item_id: z.number().int(), name: z.string(), quantity: z.number().int() })),
});

export const stateResponse = z.object({
  observerId: z.number().int(),
  at: z.iso.datetime(),
  instances: z.array(instanceSchema),
  users: z.array(economyStateSchema),
  events: z.array(timelineEventSchema),
  eventCount: z.number().int(),
});

export const reconstructQuery = z.object({
  at: atField,
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const reconstructResponse = z.object({
  observerId: z.number().int(),
  at: z.iso.datetime(),
  lastReflection: z
    .object({ memoryId: z.number().int(), text: z.string(), createdAt: z.iso.datetime() })
    .nullable(),
  memories: z.array(
    z.object({
      id: z.number().int(),
      userId: z.number().int(),
      content: z.string(),
      source: z.string(),
      metadata: jsonObject,
      createdAt: z.iso.datetime(),
    }),
  ),
  timeline: z.object({
    eventCount: z.number().int(),
    firstAt: z.iso.datetime().nullable(),
    lastAt: z.iso.datetime().nullable(),
    byType: counts,
  }),
  instances: z.object({ total: z.number().int(), active: z.number().int() }),
});

export const rangeResponse = z.object({
  observerId: z.number().int(),
  min: z.iso.datetime().nullable(),
  max: z.iso.datetime().nullable(),
  eventCount: z.number().int(),
});
