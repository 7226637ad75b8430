import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';
import { MAX_CHANGE } from './inventory.rules.js';

const jsonObject = z.record(z.string(), z.unknown());
// Bounded so a sum can never leave JavaScript's exact integer range.
const nonZeroInt = z
  .number()
  .int()
  .min(-MAX_CHANGE)
  .max(MAX_CHANGE)
  .refine((n) => n !== 0, { message: 'must not be 0' });

export const idParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [3] }),
});

export const itemSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    type: z.string(),
    metadata: jsonObject,
  })
  .meta({
    id: 'Item',
    examples: [
      {
        id: 3,
        name: 'Lantern oil',
        description: 'Keeps a lighthouse lit for a night.',
        type: 'consumable',
        metadata: { weight: 1 },
      },
    ],
  });
export type Item = z.infer<typeof itemSchema>;

export const itemBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(10_000).default(''),
    type: z.string().trim().min(1).max(50).describe('for example weapon, consumable, key'),
    metadata: jsonObject.optional(),
  })
  .meta({
    examples: [
      {
        name: 'Lantern oil',
        description: 'Keeps a lighthouse lit for a night.',
        type: 'consumable',
        metadata: { weight: 1 },
      },
    ],
  });
export type ItemInput = z.infer<typeof itemBody>;

export const itemsQuery = z.object({
  type: z.string().max(50).optional(),
  ...pageFields(),
});
export const itemListResponse = z.object({
  items: z.array(itemSchema),
  ...pageMeta,
});

export const inventoryEntrySchema = z.object({
  item_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  type: z.string(),
  metadata: jsonObject,
  quantity: z.number().int(),
});
export const inventorySchema = z
  .object({ items: z.array(inventoryEntrySchema), energy_coins: z.number().int() })
  .meta({
    id: 'Inventory',
    examples: [
      {
        items: [
          {
            item_id: 3,
            name: 'Lantern oil',
            description: 'Keeps a lighthouse lit for a night.',
            type: 'consumable',
            metadata: {},
            quantity: 2,
          },
        ],
        energy_coins: 120,
      },
    ],
  });
export type InventoryView = z.infer<typeof inventorySchema>;

export const itemChangeBody = z
  .object({ userId: z.number().int().positive(), itemId: z.number().int().positive(), quantity: nonZeroInt })
  .strict();
export const currencyChangeBody = z
  .object({ userId: z.number().int().positive(), amount: nonZeroInt })
  .strict();
export const modifyBody = z
  .union([itemChangeBody, currencyChangeBody])
  .describe('{ userId, itemId, quantity } changes an item; { userId, amount } changes energy coins')
  .meta({
    examples: [
      { userId: 42, itemId: 3, quantity: 2 },
      { userId: 42, amount: -25 },
    ],
  });
export type ModifyInput = z.infer<typeof modifyBody>;

/** The director's tool arguments (spec: inventory rule 3), for the chat module's model tools. */
export const directorModifyInventoryArgs = z.object({
  itemId: z.number().int().positive(),
  quantity: nonZeroInt,
});
export const directorModifyCurrencyArgs = z.object({ amount: nonZeroInt });
