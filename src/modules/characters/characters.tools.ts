// A character's tools (its card's `tools`): which of the chat turn's economy tools it may call and
// within which limits, per player and UTC day. A card without `tools` gives the character none (the
// assistant's own turns then keep the default tools: chat.tools.rules.ts).
import { z } from 'zod';
import { MAX_CHANGE } from '../inventory/index.js';

const limit = z.number().int().min(0).max(MAX_CHANGE);

export const npcToolsSchema = z
  .object({
    modifyInventory: z
      .object({
        items: z
          .union([z.literal('all'), z.array(z.number().int().positive()).max(500)])
          .describe('the item ids the character may give or take, or "all"'),
        maxQuantity: limit.describe('the most of one item one call may change (either way)'),
        dailyQuantity: limit.describe('the most, of all items together, changed for one player per UTC day'),
      })
      .strict()
      .optional(),
    modifyCurrency: z
      .object({
        maxAmount: limit.describe('the most energy coins one call may award or charge'),
        dailyAmount: limit.describe('the most awarded and charged together for one player per UTC day'),
      })
      .strict()
      .optional(),
  })
  .strict()
  .describe(
    "the economy tools the character may call and their limits; unset or null: none (the assistant's defaults for the assistant)",
  )
  .meta({
    id: 'NpcTools',
    examples: [
      {
        modifyInventory: { items: [3, 4], maxQuantity: 1, dailyQuantity: 2 },
        modifyCurrency: { maxAmount: 20, dailyAmount: 50 },
      },
    ],
  });
export type NpcTools = z.infer<typeof npcToolsSchema>;
