import { z } from 'zod';
import { pageMeta } from '../../platform/http/pagination.js';
import { npcToolsSchema } from './characters.tools.js';

const jsonObject = z.record(z.string(), z.unknown());
export const idParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [7] }),
});

export const npcBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(10_000).default(''),
    personaType: z.string().trim().min(1).max(50).optional(),
    metadata: jsonObject.optional(),
    tools: npcToolsSchema.nullable().optional(),
  })
  .meta({
    examples: [
      {
        name: 'Mira',
        description: 'The blacksmith of the harbour town; gruff, fair, proud of her forge.',
        personaType: 'crafter',
        metadata: { specialties: ['writing', 'review'] },
      },
    ],
  });
export type NpcInput = z.infer<typeof npcBody>;

export const npcSchema = z
  .object({
    id: z.number().int().describe("the character's user id (the spec's assistant_user_id)"),
    name: z.string(),
    description: z.string(),
    personaType: z.string().nullable(),
    metadata: jsonObject,
    tools: npcToolsSchema.nullable(),
    isAssistant: z.boolean(),
  })
  .meta({
    id: 'Npc',
    examples: [
      {
        id: 7,
        name: 'Mira',
        description: 'The blacksmith of the harbour town.',
        personaType: 'crafter',
        metadata: { specialties: ['writing', 'review'] },
        tools: { modifyInventory: { items: [3], maxQuantity: 1, dailyQuantity: 1 } },
        isAssistant: false,
      },
    ],
  });
export type Npc = z.infer<typeof npcSchema>;
export const npcListResponse = z.object({
  npcs: z.array(npcSchema),
  ...pageMeta,
});

export const emotionsSchema = z.record(z.string().min(1).max(50), z.number().min(0).max(1));
export const characterStateSchema = z
  .object({
    persona: z.object({ name: z.string(), description: z.string(), personaType: z.string().nullable() }),
    emotions: emotionsSchema,
    config: jsonObject,
  })
  .meta({ id: 'CharacterState' });
export type CharacterState = z.infer<typeof characterStateSchema>;

export const putStateBody = z
  .object({
    persona: z
      .object({
        name: z.string().trim().min(1).max(100).optional(),
        description: z.string().max(10_000).optional(),
        personaType: z.string().trim().min(1).max(50).nullable().optional(),
      })
      .strict()
      .optional(),
    emotions: emotionsSchema.optional(),
    config: jsonObject.optional(),
  })
  .strict()
  .meta({
    examples: [
      {
        persona: { description: 'Tired after the festival' },
        emotions: { joy: 0.6, fatigue: 0.8 },
        config: { verbosity: 'low' },
      },
    ],
  });
export type PutStateInput = z.infer<typeof putStateBody>;

export const relationshipBody = z
  .object({
    userId: z.number().int().positive(),
    npcUserId: z.number().int().positive(),
    flags: z.record(z.string().min(1).max(50), z.boolean()).optional(),
    affinity: z.number().min(-1).max(1).optional(),
  })
  .meta({ examples: [{ userId: 42, npcUserId: 7, flags: { metAtForge: true }, affinity: 0.4 }] });
export type RelationshipInput = z.infer<typeof relationshipBody>;

export const relationshipSchema = z
  .object({
    userId: z.number().int(),
    npcUserId: z.number().int(),
    npcName: z.string(),
    flags: z.record(z.string(), z.boolean()),
    affinity: z.number(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Relationship' });
export type Relationship = z.infer<typeof relationshipSchema>;

export const questBody = z
  .object({
    title: z.string().trim().min(1).max(200),
    description: z.string().max(10_000).default(''),
    metadata: jsonObject.optional(),
  })
  .meta({
    examples: [
      {
        title: 'Relight the lighthouse',
        description: 'Bring oil from the market to the old lighthouse.',
        metadata: { reward: 50 },
      },
    ],
  });
export type QuestInput = z.infer<typeof questBody>;
export const questSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    description: z.string(),
    metadata: jsonObject,
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'Quest',
    examples: [
      {
        id: 3,
        title: 'Relight the lighthouse',
        description: 'Bring oil from the market to the old lighthouse.',
        metadata: { reward: 50 },
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type Quest = z.infer<typeof questSchema>;
export const questListResponse = z.object({
  quests: z.array(questSchema),
  ...pageMeta,
});

export const QUEST_STATUSES = ['active', 'completed', 'failed'] as const;
export const playerQuestSchema = z
  .object({
    questId: z.number().int(),
    title: z.string(),
    status: z.enum(QUEST_STATUSES),
    progress: z.number().min(0).max(1),
    updatedAt: z.iso.datetime(),
  })
  .meta({
    id: 'PlayerQuest',
    examples: [
      {
        questId: 3,
        title: 'Relight the lighthouse',
        status: 'active',
        progress: 0.5,
        updatedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type PlayerQuest = z.infer<typeof playerQuestSchema>;
export const playerQuestBody = z
  .object({ status: z.enum(QUEST_STATUSES).optional(), progress: z.number().min(0).max(1).optional() })
  .strict()
  .meta({ examples: [{ status: 'active', progress: 0.5 }] });
export const playerQuestParams = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [3] }),
  userId: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [42] }),
});
