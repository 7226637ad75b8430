// Instance registry requests and answers (the routes in instances.routes.ts).
import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';
import { instanceSchema, instanceSourceSchema, jsonObject } from './timeline.schemas.js';

export const levelSchema = z.union([z.literal(5), z.literal(8)]);
export const instanceIdParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [5] }),
});

export const createInstanceBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    level: levelSchema,
    source: instanceSourceSchema,
    personaId: z.number().int().positive().optional(),
    parentInstanceId: z.number().int().positive().optional(),
    stateMachineInstanceId: z.uuid().optional(),
    userId: z.number().int().positive().optional(),
    channelId: z.string().min(1).max(200).optional(),
    metadata: jsonObject.optional(),
  })
  .meta({
    examples: [
      {
        name: 'Harbour shard',
        level: 5,
        source: 'game_client',
        parentInstanceId: 3,
        metadata: { region: 'eu' },
      },
    ],
  });
export type CreateInstanceInput = z.infer<typeof createInstanceBody>;

export const patchInstanceBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    isActive: z.boolean().optional(),
    metadata: jsonObject.optional(),
    personaId: z.number().int().positive().nullable().optional(),
    stateMachineInstanceId: z.uuid().nullable().optional(),
    channelId: z.string().min(1).max(200).nullable().optional(),
    userId: z.number().int().positive().nullable().optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' })
  .meta({ examples: [{ isActive: false }] });
export type PatchInstanceInput = z.infer<typeof patchInstanceBody>;

const boolString = z.enum(['true', 'false']).transform((v) => v === 'true');
export const listInstancesQuery = z.object({
  level: z
    .enum(['5', '8'])
    .transform((v) => Number(v) as 5 | 8)
    .optional(),
  source: instanceSourceSchema.optional(),
  active: boolString.optional(),
  parentInstanceId: z.coerce.number().int().positive().optional(),
  ...pageFields(),
});

export const instanceListResponse = z.object({ instances: z.array(instanceSchema), ...pageMeta });
