// `inventoryUpdate` (contract: "Doors for games"): when a chat turn's tools (the director's
// modifyInventory and modifyCurrency) change a player's items or coins, the player's sockets on
// every node hear it once the change committed: the inventory as it is now and the change.
import { z } from 'zod';
import type { Namespace, Server } from 'socket.io';
import type { EventBus } from '../../platform/events/bus.js';
import { broadcaster } from '../../platform/realtime/broadcast.js';
import type { SocketData } from '../../platform/realtime/socket-server.js';
import type { ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import { inventoryEntrySchema, type InventoryView } from './inventory.schemas.js';

/** The inventory read after a change (InventoryService.inventory; not imported: the service
 * imports this file). */
interface InventoryReader {
  inventory(userId: number): Promise<InventoryView>;
}

export const inventoryChangeSchema = z.object({
  kind: z.enum(['item', 'currency']),
  itemId: z.number().int().nullable().describe('the item (null for energy coins)'),
  delta: z.number().int(),
  before: z.number().int(),
  after: z.number().int(),
  timelineEventId: z.number().int().describe('the director event that records the change'),
});

export const inventoryUpdateEvent = z.object({
  items: z.array(inventoryEntrySchema),
  energyCoins: z.number().int(),
  change: inventoryChangeSchema,
});
export type InventoryUpdate = z.infer<typeof inventoryUpdateEvent>;

/** A committed director change of a player's inventory. */
export type InventoryChanged = z.infer<typeof inventoryChangeSchema> & { userId: number };

export function changed(
  { userId }: { userId: number },
  timelineEventId: number,
  itemId: number | null,
  delta: number,
  before: number,
  after: number,
): InventoryChanged {
  return {
    userId,
    kind: itemId === null ? 'currency' : 'item',
    itemId,
    delta,
    before,
    after,
    timelineEventId,
  };
}

declare module '../../platform/events/bus.js' {
  interface AppEvents {
    'inventory.changed': InventoryChanged;
  }
}

export interface InventoryServerEvents {
  inventoryUpdate: (e: InventoryUpdate) => void;
}

const userRoom = (userId: number) => `user:${userId}`;

/** Each socket joins its user's room; each committed change goes to that room with the
 * inventory read after it. */
export function inventorySockets(
  io: Server,
  { bus, inventory }: { bus: EventBus; inventory: InventoryReader },
) {
  const nsp = io.of('/') as unknown as Namespace<Record<string, never>, InventoryServerEvents>;
  nsp.on('connection', (socket) => {
    void socket.join(userRoom((socket.data as SocketData).user.id));
  });
  const send = broadcaster(nsp);
  bus.on('inventory.changed', async ({ userId, ...change }) => {
    const now = await inventory.inventory(userId);
    send(userRoom(userId), 'inventoryUpdate', { items: now.items, energyCoins: now.energy_coins, change });
  });
}

export const inventoryEventDocs = {
  inventoryUpdate: {
    summary: "The player's items or coins changed in a turn",
    description:
      "Sent to the player's sockets, on every node, after a chat turn's tool (modifyInventory, modifyCurrency) changed the player's items or energy coins: the inventory as it is now, and the change (`kind`, `itemId`, `delta`, `before`, `after`, and the director's timeline event). The turn's `assistantResponse` carries the same tool results (`toolResults`).",
    payload: inventoryUpdateEvent,
    example: {
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
      energyCoins: 120,
      change: { kind: 'item', itemId: 3, delta: 1, before: 1, after: 2, timelineEventId: 981 },
    },
  },
} satisfies ServerEventDocs<InventoryServerEvents>;
