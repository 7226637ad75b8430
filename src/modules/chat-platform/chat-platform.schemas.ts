// Chat-platform shapes: channel configuration (contract: "Protocols and conversations"), linked
// platform users and commands (contract: "Chat-platform commands").
import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';
import { problemSchema } from '../../platform/http/problem.js';
import { protocolIdSchema } from '../protocols/index.js';

// At most 100 characters: Fastify's path-parameter limit, so every channel that can be set can be read.
export const channelIdSchema = z.string().trim().min(1).max(100);

export const channelConfigBody = z
  .object({
    channelId: channelIdSchema,
    protocolId: protocolIdSchema,
    guildId: z.string().trim().min(1).max(200).nullish(),
  })
  .strict()
  .meta({
    examples: [
      { channelId: '1203948576012345678', protocolId: 'tech_protocol_v1', guildId: '1203948576000000001' },
    ],
  });

export const channelConfigSchema = z
  .object({
    channelId: z.string(),
    guildId: z.string().nullable(),
    protocolId: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({
    id: 'ChannelConfig',
    examples: [
      {
        channelId: '1203948576012345678',
        guildId: '1203948576000000001',
        protocolId: 'tech_protocol_v1',
        createdAt: '2025-05-01T09:30:00.000Z',
        updatedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type ChannelConfig = z.infer<typeof channelConfigSchema>;

export const channelIdParam = z.object({
  channelId: channelIdSchema.meta({ examples: ['1203948576012345678'] }),
});

// ---- linked platform users (beyond the spec: the mapping the contract's commands need) -------

export const platformUserIdSchema = z.string().trim().min(1).max(100);
export const platformUserParam = z.object({
  platformUserId: platformUserIdSchema.meta({ examples: ['998877665544332211'] }),
});

export const linkBody = z
  .strictObject({
    userId: z.number().int().positive().describe('the account this platform user acts as'),
  })
  .meta({ examples: [{ userId: 42 }] });

export const linkSchema = z
  .object({
    platformUserId: z.string(),
    userId: z.number().int(),
    linkedByUserId: z.number().int().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({
    id: 'ChatPlatformUserLink',
    examples: [
      {
        platformUserId: '998877665544332211',
        userId: 42,
        linkedByUserId: 1,
        createdAt: '2025-05-01T09:30:00.000Z',
        updatedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type PlatformUserLink = z.infer<typeof linkSchema>;

export const linkListQuery = z.object({
  userId: z.coerce.number().int().positive().optional().describe('only the links to this account'),
  ...pageFields(),
});
export const linkListResponse = z.object({ links: z.array(linkSchema), ...pageMeta });

// ---- commands (contract "Chat-platform commands") --------------------------------------------

export const commandBody = z
  .strictObject({
    command: z.string().trim().min(1).max(100).describe('e.g. `/observer-instance`; the `/` is optional'),
    args: z
      .record(z.string().max(100), z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]))
      .default({})
      .describe('named as the command names them; "3" and "true" are coerced to the argument type'),
    channelId: channelIdSchema.describe('the chat-platform channel the command was sent in'),
    guildId: z.string().trim().min(1).max(200).nullish(),
    platformUserId: platformUserIdSchema
      .optional()
      .describe('with an API key: the platform user who sent it (acts as the linked account)'),
  })
  .meta({
    id: 'ChatPlatformCommand',
    examples: [
      {
        command: '/observer-transition',
        args: { instance_id: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f', target_state: 'review' },
        channelId: '1203948576012345678',
        platformUserId: '998877665544332211',
      },
    ],
  });
export type CommandBody = z.infer<typeof commandBody>;

export const commandResponse = z
  .object({
    command: z.string().describe('the command run, without `/`'),
    text: z.string().max(2000).describe('the answer for the chat'),
    result: z
      .record(z.string(), z.unknown())
      .describe(
        "the body the operation's REST route answers with (an instance, `{ artifacts }`, a task, a run…)",
      ),
  })
  .meta({ id: 'ChatPlatformCommandAnswer' });

export const commandProblemSchema = problemSchema
  .extend({ text: z.string().max(2000).describe('the refusal for the chat') })
  .meta({ id: 'ChatPlatformCommandProblem' });
