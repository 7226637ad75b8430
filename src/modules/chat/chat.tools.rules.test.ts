// The character tool limits as tables: which tools a card gives, and which calls stay within them.
import { describe, expect, it } from 'vitest';
import type { NpcTools } from '../characters/index.js';
import {
  checkToolCall,
  DEFAULT_ASSISTANT_TOOLS,
  effectiveTools,
  inventoryToolDescription,
  toolAllowed,
  type ToolRequest,
} from './chat.tools.rules.js';

const shop: NpcTools = {
  modifyInventory: { items: [3, 4], maxQuantity: 2, dailyQuantity: 5 },
  modifyCurrency: { maxAmount: 20, dailyAmount: 50 },
};
const give = (itemId: number, quantity: number): ToolRequest => ({
  tool: 'modifyInventory',
  itemId,
  quantity,
});
const pay = (amount: number): ToolRequest => ({ tool: 'modifyCurrency', amount });

describe('character tool limits', () => {
  it.each([
    [undefined, {}],
    [{ tools: null, isAssistant: false }, {}],
    [{ tools: null, isAssistant: true }, DEFAULT_ASSISTANT_TOOLS],
    [{ tools: shop, isAssistant: true }, shop],
    [{ tools: {}, isAssistant: true }, {}],
  ])('effectiveTools(%j)', (card, tools) => {
    expect(effectiveTools(card)).toEqual(tools);
  });

  it.each([
    [{}, 'modifyCurrency', false],
    [{}, 'lookupMemory', true],
    [shop, 'modifyInventory', true],
    [{ modifyCurrency: shop.modifyCurrency }, 'modifyInventory', false],
  ] as const)('toolAllowed(%j, %s) = %s', (tools, name, allowed) => {
    expect(toolAllowed(tools, name)).toBe(allowed);
  });

  it.each([
    // tools, call, used today → refusal (null: allowed)
    [shop, give(3, 2), 0, null],
    [shop, give(3, -2), 0, null],
    [shop, give(3, 3), 0, 'call_limit'],
    [shop, give(3, -3), undefined, 'call_limit'],
    [shop, give(5, 1), 0, 'item_not_allowed'],
    [shop, give(4, 2), 3, null],
    [shop, give(4, 2), 4, 'daily_limit'],
    [shop, give(4, 2), undefined, null],
    [shop, pay(20), 30, null],
    [shop, pay(-20), 31, 'daily_limit'],
    [shop, pay(21), 0, 'call_limit'],
    [{}, pay(1), 0, 'tool_not_allowed'],
    [{}, give(3, 1), 0, 'tool_not_allowed'],
    [{ modifyInventory: { items: 'all', maxQuantity: 1, dailyQuantity: 1 } }, give(999, 1), 0, null],
  ] as const)('checkToolCall(%j, %j, used %s) = %s', (tools, call, used, refusal) => {
    expect(checkToolCall(tools, call, used)?.reason ?? null).toBe(refusal);
  });

  it('describes the inventory tool with its limits and its items by id', () => {
    expect(inventoryToolDescription(shop.modifyInventory!, [{ id: 3, name: 'Oil' }], 2)).toBe(
      'Give the player items (positive quantity) or take items from them (negative quantity), at most 2 in one call and 5 a day. Items you may give or take (itemId: name): 3: Oil; and 2 more.',
    );
    expect(inventoryToolDescription(shop.modifyInventory!, [])).toContain(
      'There is no item you may give or take.',
    );
  });
});
