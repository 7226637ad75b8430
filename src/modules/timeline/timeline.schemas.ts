import { z } from 'zod';

export const INSTANCE_SOURCES = ['portal', 'chat_platform', 'state_machine', 'game_client'] as const;
export const instanceSourceSchema = z.enum(INSTANCE_SOURCES);
export const jsonObject = z.record(z.string(), z.unknown());

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
  .meta({ id: 'TimelineEvent' });
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
  .meta({ id: 'Instance' });
export type Instance = z.infer<typeof instanceSchema>;

export const instanceActivitySchema = z.object({
  instanceId: z.number().int(),
  isActive: z.boolean(),
  lastSeenAt: z.iso.datetime().nullable(),
});
export type InstanceActivity = z.infer<typeof instanceActivitySchema>;
