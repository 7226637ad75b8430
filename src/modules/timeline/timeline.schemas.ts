import { z } from 'zod';

export const INSTANCE_SOURCES = ['portal', 'chat_platform', 'state_machine', 'game_client'] as const;
export const instanceSourceSchema = z.enum(INSTANCE_SOURCES);
export const jsonObject = z.record(z.string(), z.unknown());

/** What a timeline event looks like (the OpenAPI and AsyncAPI documents' example). */
export const timelineEventExample = {
  id: 901,
  userId: 42,
  eventType: 'quest_completed',
  eventText: 'Ada relit the lighthouse',
  source: 'game_client',
  instanceId: 5,
  observerId: 3,
  personaId: null,
  metadata: {
    instance: { id: 5, name: 'Harbour shard', level: 5, source: 'game_client', personaId: null },
  },
  occurredAt: '2025-05-01T09:30:00.000Z',
  timelineAt: '2025-05-01T09:30:00.000Z',
};

export const timelineEventSchema = z
  .object({
    id: z.number().int(),
    userId: z.number().int().nullable(),
    eventType: z.string(),
    eventText: z.string(),
    source: z.string(),
    instanceId: z.number().int().nullable(),
    observerId: z.number().int(),
    personaId: z.number().int().nullable(),
    metadata: jsonObject,
    occurredAt: z.iso.datetime(),
    timelineAt: z.iso.datetime(),
  })
  .meta({ id: 'TimelineEvent', examples: [timelineEventExample] });
export type TimelineEvent = z.infer<typeof timelineEventSchema>;

export const instanceSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    level: z.union([z.literal(5), z.literal(8)]),
    personaId: z.number().int().nullable(),
    source: instanceSourceSchema,
    parentInstanceId: z.number().int().nullable(),
    stateMachineInstanceId: z.string().nullable(),
    channelId: z.string().nullable(),
    userId: z.number().int().nullable(),
    isActive: z.boolean(),
    lastSeenAt: z.iso.datetime().nullable(),
    metadata: jsonObject,
    isRoot: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'Instance',
    examples: [
      {
        id: 5,
        name: 'Harbour shard',
        level: 5,
        personaId: null,
        source: 'game_client',
        parentInstanceId: 3,
        stateMachineInstanceId: null,
        channelId: null,
        userId: null,
        isActive: true,
        lastSeenAt: '2025-05-01T09:30:00.000Z',
        metadata: { region: 'eu' },
        isRoot: false,
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type Instance = z.infer<typeof instanceSchema>;

export const instanceActivitySchema = z.object({
  instanceId: z.number().int(),
  isActive: z.boolean(),
  lastSeenAt: z.iso.datetime().nullable(),
});
export type InstanceActivity = z.infer<typeof instanceActivitySchema>;
