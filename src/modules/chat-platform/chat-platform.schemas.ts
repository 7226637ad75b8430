// Chat-platform channel configuration (contract: "Protocols and conversations").
import { z } from 'zod';
import { protocolIdSchema } from '../protocols/index.js';

// At most 100 characters: Fastify's path-parameter limit, so every channel that can be set can be read.
export const channelIdSchema = z.string().trim().min(1).max(100);

export const channelConfigBody = z
  .object({
    channelId: channelIdSchema,
    protocolId: protocolIdSchema,
    guildId: z.string().trim().min(1).max(200).nullish(),
  })
  .strict();

export const channelConfigSchema = z
  .object({
    channelId: z.string(),
    guildId: z.string().nullable(),
    protocolId: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ChannelConfig' });
export type ChannelConfig = z.infer<typeof channelConfigSchema>;

export const channelIdParam = z.object({ channelId: channelIdSchema });
