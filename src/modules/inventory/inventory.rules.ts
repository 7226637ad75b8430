// Pure rules of the economy (spec: "Inventory endpoints", rules 1, 2 and 4).

export type ItemChangeOutcome =
  | { kind: 'insert' | 'update'; after: number }
  | { kind: 'delete'; after: 0 }
  | { kind: 'insufficient'; held: number };

/** spec: inventory rule 1. A positive quantity adds, a negative removes; a missing record is
 * created; a record reaching 0 is removed; removing more than is held is an error. */
export function itemChange(held: number | null, quantity: number): ItemChangeOutcome {
  const current = held ?? 0;
  const after = current + quantity;
  if (after < 0) return { kind: 'insufficient', held: current };
  if (after === 0) return { kind: 'delete', after: 0 };
  return { kind: held === null ? 'insert' : 'update', after };
}

/** The largest energy coin balance a user may have, the largest quantity of one item a user
 * may hold, and the largest single change: far inside JavaScript's exact integers (2^53), so
 * every sum stays exact and every stored figure fits the answers' schemas. */
export const MAX_BALANCE = 1_000_000_000_000;
export const MAX_HELD = 1_000_000_000_000;
export const MAX_CHANGE = 1_000_000_000_000;

/** spec: inventory rule 2. The change is rejected when the balance would go below 0. */
export function currencyAllowed(balance: number, amount: number): boolean {
  return balance + amount >= 0;
}

/** A change is a non-zero integer of at most MAX_CHANGE either way. */
export function changeInRange(n: number): boolean {
  return Number.isSafeInteger(n) && n !== 0 && Math.abs(n) <= MAX_CHANGE;
}

/** spec: inventory rule 4. "item name x quantity" lines, then the energy coin balance. */
export function inventorySummary(items: { name: string; quantity: number }[], energyCoins: number): string {
  const lines = items.map((i) => `${i.name} x ${i.quantity}`);
  return [...(lines.length ? lines : ['(no items)']), `Energy coins: ${energyCoins}`].join('\n');
}
