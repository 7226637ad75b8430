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

export const PLAYER_MEMORY = ['own', 'shared'] as const;
/** A character card's fields beside name and description (who it is, how it speaks, what it wants). */
const cardFields = {
  personality: z.string().max(4_000).default('').describe('who the character is, in a few sentences'),
  speakingStyle: z.string().max(2_000).default('').describe('how the character speaks'),
  goals: z.array(z.string().trim().min(1).max(500)).max(20).default([]).describe('what the character wants'),
  playerMemory: z
    .enum(PLAYER_MEMORY)
    .default('own')
    .describe(
      "`own`: what a player tells this character stays this character's knowledge of the player; " +
        '`shared`: it joins one pool read by every character set to `shared`',
    ),
};

export const npcBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(10_000).default(''),
    personaType: z.string().trim().min(1).max(50).optional(),
    metadata: jsonObject.optional(),
    ...cardFields,
    tools: npcToolsSchema.nullable().optional(),
  })
  .meta({
    examples: [
      {
        name: 'Mira',
        description: 'The blacksmith of the harbour town.',
        personaType: 'crafter',
        metadata: { specialties: ['writing', 'review'] },
        personality: 'Gruff, fair, proud of her forge; softens for apprentices.',
        speakingStyle: 'Short sentences, smithing words, never says please.',
        goals: ['Forge a blade worthy of the harbour guard', 'Find an apprentice'],
        playerMemory: 'own',
      },
    ],
  });
type NpcBody = z.infer<typeof npcBody>;
type CardKey = keyof typeof cardFields;
/** A character to create or replace: the route's parsed body, or a caller's own (the card's fields
 * take their defaults when left out). */
export type NpcInput = Omit<NpcBody, CardKey> & Partial<Pick<NpcBody, CardKey>>;

export const npcSchema = z
  .object({
    id: z.number().int().describe("the character's user id (the spec's assistant_user_id)"),
    name: z.string(),
    description: z.string(),
    personaType: z.string().nullable(),
    metadata: jsonObject,
    tools: npcToolsSchema.nullable(),
    isAssistant: z.boolean(),
    personality: z.string(),
    speakingStyle: z.string(),
    goals: z.array(z.string()),
    playerMemory: z.enum(PLAYER_MEMORY),
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
        personality: 'Gruff, fair, proud of her forge; softens for apprentices.',
        speakingStyle: 'Short sentences, smithing words, never says please.',
        goals: ['Forge a blade worthy of the harbour guard', 'Find an apprentice'],
        playerMemory: 'own',
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
    objectives: z
      .array(z.string().trim().min(1).max(500))
      .max(50)
      .default([])
      .describe("the quest's steps in order; a player's `step` is an index into them"),
    metadata: jsonObject.optional(),
  })
  .meta({
    examples: [
      {
        title: 'Relight the lighthouse',
        description: 'Bring oil from the market to the old lighthouse.',
        objectives: ['Buy oil at the market', 'Climb the lighthouse', 'Light the lamp'],
        metadata: { reward: 50 },
      },
    ],
  });
export type QuestInput = Omit<z.infer<typeof questBody>, 'objectives'> & {
  objectives?: string[] | undefined;
};
export const questSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    description: z.string(),
    objectives: z.array(z.string()),
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
        objectives: ['Buy oil at the market', 'Climb the lighthouse', 'Light the lamp'],
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
    description: z.string(),
    objectives: z.array(z.string()),
    status: z.enum(QUEST_STATUSES),
    progress: z.number().min(0).max(1),
    step: z.number().int().nullable().describe('the objective the player is on (an index), or null'),
    updatedAt: z.iso.datetime(),
  })
  .meta({
    id: 'PlayerQuest',
    examples: [
      {
        questId: 3,
        title: 'Relight the lighthouse',
        description: 'Bring oil from the market to the old lighthouse.',
        objectives: ['Buy oil at the market', 'Climb the lighthouse', 'Light the lamp'],
        status: 'active',
        progress: 0.5,
        step: 1,
        updatedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type PlayerQuest = z.infer<typeof playerQuestSchema>;
export const playerQuestBody = z
  .object({
    status: z.enum(QUEST_STATUSES).optional(),
    progress: z.number().min(0).max(1).optional(),
    step: z.number().int().min(0).max(49).nullable().optional(),
  })
  .strict()
  .meta({ examples: [{ status: 'active', progress: 0.5, step: 1 }] });
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
