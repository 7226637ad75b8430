import { z } from 'zod';
import {
  characterStateSchema,
  emotionsSchema,
  playerQuestSchema,
  relationshipSchema,
} from '../characters/index.js';
import { inventorySchema } from '../inventory/index.js';
import { SERVICE_EVENT_TYPES, timelineEventSchema } from '../timeline/index.js';

export const ingestBody = z
  .object({
    userId: z.number().int().positive(),
    eventType: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .refine((t) => !SERVICE_EVENT_TYPES.includes(t), {
        message: 'this event type is written by the service itself (the past is rebuilt from it)',
      }),
    eventText: z.string().max(10_000).default(''),
    metadata: z
      .object({
        instanceId: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('the registry instance the event concerns; it decides the observer'),
        personaId: z.number().int().positive().optional(),
        questId: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            "with a quest_started, quest_progressed, quest_completed or quest_failed event: the player's quest it moves",
          ),
        questProgress: z.number().min(0).max(1).optional().describe('the quest progress it reaches (0..1)'),
      })
      .catchall(z.unknown())
      .default({}),
  })
  .meta({
    examples: [
      {
        userId: 42,
        eventType: 'quest_completed',
        eventText: 'Ada relit the lighthouse',
        metadata: { instanceId: 5 },
      },
    ],
  });
export type IngestInput = z.infer<typeof ingestBody>;

export const universalStateQuery = z.object({
  userId: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const syncMemorySchema = z.object({
  id: z.number().int(),
  userId: z.number().int(),
  content: z.string(),
  source: z.string(),
  createdAt: z.iso.datetime(),
});

export const universalStateSchema = z
  .object({
    assistantState: characterStateSchema,
    emotions: emotionsSchema,
    memories: z.array(syncMemorySchema),
    timeline: z.array(timelineEventSchema),
    inventory: inventorySchema,
    quests: z.array(playerQuestSchema),
    relationships: z.array(relationshipSchema),
  })
  .meta({ id: 'UniversalState' });
export type UniversalState = z.infer<typeof universalStateSchema>;
