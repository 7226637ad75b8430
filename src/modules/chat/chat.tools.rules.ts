// The limits on a character's economy tools, pure: which tools a character may call (its card's
// `tools`; the assistant without one keeps the defaults below), whether one call stays within
// them, and the tool descriptions that name the items it may give, with their ids.
import type { NpcTools } from '../characters/index.js';

/** The assistant's tools when its card sets none: any item, at most 10 of one a call and 50 a
 * day per player; at most 100 energy coins a call and 500 a day per player. */
export const DEFAULT_ASSISTANT_TOOLS: NpcTools = {
  modifyInventory: { items: 'all', maxQuantity: 10, dailyQuantity: 50 },
  modifyCurrency: { maxAmount: 100, dailyAmount: 500 },
};

export const ECONOMY_TOOLS = ['modifyInventory', 'modifyCurrency'] as const;
export type EconomyTool = (typeof ECONOMY_TOOLS)[number];

/** The tools a character's turn may use: its card's; the assistant without a card's, the
 * defaults; anyone else without one, none. */
export function effectiveTools(card: { tools: NpcTools | null; isAssistant: boolean } | undefined): NpcTools {
  if (card?.tools) return card.tools;
  return card?.isAssistant ? DEFAULT_ASSISTANT_TOOLS : {};
}

/** Whether a tool is the character's to call (lookupMemory, which changes nothing, always is). */
export function toolAllowed(tools: NpcTools, name: string): boolean {
  return (ECONOMY_TOOLS as readonly string[]).includes(name)
    ? tools[name as EconomyTool] !== undefined
    : true;
}

export type ToolRequest =
  { tool: 'modifyInventory'; itemId: number; quantity: number } | { tool: 'modifyCurrency'; amount: number };

export interface ToolRefusal {
  reason: 'tool_not_allowed' | 'item_not_allowed' | 'call_limit' | 'daily_limit' | 'not_approved';
  detail: string;
  /** The limit the call would pass, when one did. */
  limit?: number;
}

/** Whether one call stays within the character's limits, given what it already changed for the
 * player today (`usedToday`; undefined: not checked yet, only the per-call limits are). */
export function checkToolCall(tools: NpcTools, req: ToolRequest, usedToday?: number): ToolRefusal | null {
  if (req.tool === 'modifyInventory') {
    const t = tools.modifyInventory;
    if (!t) return { reason: 'tool_not_allowed', detail: 'this character may not change inventories' };
    if (t.items !== 'all' && !t.items.includes(req.itemId))
      return { reason: 'item_not_allowed', detail: `this character may not give or take item ${req.itemId}` };
    return within(Math.abs(req.quantity), t.maxQuantity, t.dailyQuantity, usedToday, 'items');
  }
  const t = tools.modifyCurrency;
  if (!t) return { reason: 'tool_not_allowed', detail: 'this character may not change energy coins' };
  return within(Math.abs(req.amount), t.maxAmount, t.dailyAmount, usedToday, 'energy coins');
}

function within(size: number, perCall: number, daily: number, used: number | undefined, what: string) {
  if (size > perCall)
    return {
      reason: 'call_limit' as const,
      detail: `at most ${perCall} ${what} in one call`,
      limit: perCall,
    };
  if (used !== undefined && used + size > daily)
    return {
      reason: 'daily_limit' as const,
      detail: `at most ${daily} ${what} a day for this player; ${Math.max(0, daily - used)} left today`,
      limit: daily,
    };
  return null;
}

/** The most items a tool description lists by id; more are summarised. */
export const LISTED_ITEMS = 50;

/** modifyInventory's description for this character: what it does, its limits, and the items it
 * may give or take with their ids (`items`: those the card names, or every item for "all", at
 * most LISTED_ITEMS of them; `more`: how many are left out). */
export function inventoryToolDescription(
  t: NonNullable<NpcTools['modifyInventory']>,
  items: { id: number; name: string }[],
  more = 0,
): string {
  const listed = items.length
    ? ` Items you may give or take (itemId: name): ${items.map((i) => `${i.id}: ${i.name}`).join('; ')}${more > 0 ? `; and ${more} more` : ''}.`
    : ' There is no item you may give or take.';
  return `Give the player items (positive quantity) or take items from them (negative quantity), at most ${t.maxQuantity} in one call and ${t.dailyQuantity} a day.${listed}`;
}

export function currencyToolDescription(t: NonNullable<NpcTools['modifyCurrency']>): string {
  return `Award the player energy coins (positive amount) or charge them (negative amount), at most ${t.maxAmount} in one call and ${t.dailyAmount} a day. The balance never goes below 0.`;
}
