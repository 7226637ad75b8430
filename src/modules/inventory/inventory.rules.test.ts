// The inventory rules as tables (spec: "Inventory endpoints" rules 1, 2 and 4).
import { describe, expect, it } from 'vitest';
import {
  changeInRange,
  currencyAllowed,
  inventorySummary,
  itemChange,
  MAX_BALANCE,
  MAX_CHANGE,
  MAX_HELD,
} from './inventory.rules.js';

describe('inventory rules', () => {
  it.each([
    // held, quantity → outcome (spec: inventory rule 1)
    [null, 3, { kind: 'insert', after: 3 }],
    [2, 3, { kind: 'update', after: 5 }],
    [5, -2, { kind: 'update', after: 3 }],
    [5, -5, { kind: 'delete', after: 0 }],
    [5, -6, { kind: 'insufficient', held: 5 }],
    [null, -1, { kind: 'insufficient', held: 0 }],
  ] as const)('itemChange(%s, %s)', (held, quantity, outcome) => {
    expect(itemChange(held, quantity)).toEqual(outcome);
  });

  it.each([
    [10, -10, true],
    [10, -11, false],
    [0, 5, true],
    [0, -1, false],
  ])('currencyAllowed(%s, %s) = %s', (balance, amount, ok) => {
    expect(currencyAllowed(balance, amount)).toBe(ok);
  });

  it('summarises items with quantities and the coin balance (rule 4)', () => {
    expect(
      inventorySummary(
        [
          { name: 'Sword', quantity: 1 },
          { name: 'Potion', quantity: 3 },
        ],
        42,
      ),
    ).toBe('Sword x 1\nPotion x 3\nEnergy coins: 42');
    expect(inventorySummary([], 0)).toBe('(no items)\nEnergy coins: 0');
  });
});

describe('bounds', () => {
  it.each([
    [1, true],
    [-MAX_CHANGE, true],
    [MAX_CHANGE + 1, false],
    [0, false],
    [0.5, false],
    [Number.MAX_SAFE_INTEGER, false],
  ])('changeInRange(%s) = %s', (n, ok) => {
    expect(changeInRange(n)).toBe(ok);
  });

  it('keeps the maximum balance and holding far inside exact integers', () => {
    expect(MAX_BALANCE + MAX_CHANGE).toBeLessThan(Number.MAX_SAFE_INTEGER);
    expect(MAX_HELD + MAX_CHANGE).toBeLessThan(Number.MAX_SAFE_INTEGER);
  });
});
