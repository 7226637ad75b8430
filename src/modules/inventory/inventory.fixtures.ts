// What the inventory tests share (inventory.test.ts, inventory.ledger.test.ts): the real app and
// database with an admin, two players and two items, a sword and a potion. A test file calls
// `useInventoryApp()` once; the bindings below are set before its tests run.
import { afterAll, beforeAll } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

export let t: TestApp;
export let admin: TestUser;
export let player: TestUser;
export let other: TestUser;
export let sword: number;
export let potion: number;

/** The app, users and items of one test file, made before its tests and closed after. */
export function useInventoryApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t, 'cso');
    player = await createUser(t, 'public');
    other = await createUser(t, 'public');
    sword = (
      await t.deps.services.inventory.createItem({ name: 'Sword', description: 'sharp', type: 'weapon' })
    ).id;
    potion = (
      await t.deps.services.inventory.createItem({
        name: 'Potion',
        description: 'heals',
        type: 'consumable',
        metadata: { hp: 10 },
      })
    ).id;
  });
  afterAll(() => t.close());
}
