// Inventory and currency under load and in the ledger (spec: "Inventory endpoints" rules 1-3):
// 100 concurrent changes against one balance and one item (never below 0, the ledger adds up to
// what is held), the append-only ledger, the director's tool commands with their timeline events,
// and idempotency keys forgotten after the retry window. The routes are in inventory.test.ts; the
// app, users and items in inventory.fixtures.ts.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createUser } from '../../../test/harness.js';
import { deleteExpiredIdempotencyKeys } from '../../platform/http/idempotency.js';
import { potion, sword, t, useInventoryApp } from './inventory.fixtures.js';

useInventoryApp();

describe('concurrency (rules 1-2 under row locks)', () => {
  it('100 concurrent spends and awards against one balance: never below 0, ledger = balance, only affordable spends succeed', async () => {
    const u = await createUser(t, 'public');
    const inv = t.deps.services.inventory;
    await inv.modifyCurrency(u.id, 200, { reason: 'seed' });
    // 80 spends of 10 and 20 awards of 10, interleaved: 400 coins in total can pay 40 spends.
    const ops = Array.from({ length: 100 }, (_, i) => (i % 5 === 4 ? 10 : -10));
    const results = await Promise.allSettled(
      ops.map((amount) => inv.modifyCurrency(u.id, amount, { reason: 'race' })),
    );
    const spendsOk = results.filter((r, i) => ops[i]! < 0 && r.status === 'fulfilled').length;
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const f of failures) {
      // Each refused spend was refused because the balance at that moment could not pay it: every
      // change is a multiple of 10, so that balance was 0.
      expect(f.reason).toMatchObject({ code: 'insufficient_funds' });
      expect((f.reason as { extensions: { balance: number } }).extensions.balance).toBe(0);
    }
    expect(results.filter((r, i) => ops[i]! > 0 && r.status === 'rejected')).toEqual([]);
    const { energy_coins } = await inv.inventory(u.id);
    expect(energy_coins).toBe(200 + 20 * 10 - spendsOk * 10);
    expect(energy_coins).toBeGreaterThanOrEqual(0);
    // The ledger reconstructs the balance, and replayed in order it never went below 0.
    const ledger = await inv.ledger(u.id, { kind: 'currency' });
    expect(ledger).toHaveLength(1 + 20 + spendsOk);
    let running = 0;
    for (const l of ledger) {
      expect(l.balance_before).toBe(running);
      running += l.delta;
      expect(l.balance_after).toBe(running);
      expect(running).toBeGreaterThanOrEqual(0);
    }
    expect(running).toBe(energy_coins);

    // Spends alone: exactly the affordable ones succeed.
    const v = await createUser(t, 'public');
    await inv.modifyCurrency(v.id, 500);
    const spends = await Promise.allSettled(Array.from({ length: 100 }, () => inv.modifyCurrency(v.id, -10)));
    expect(spends.filter((r) => r.status === 'fulfilled')).toHaveLength(50);
    expect((await inv.inventory(v.id)).energy_coins).toBe(0);
  });

  it('100 concurrent takes and gives of one item: never below 0, ledger = quantity, only available takes succeed', async () => {
    const u = await createUser(t, 'public');
    const inv = t.deps.services.inventory;
    await inv.modifyInventory(u.id, potion, 20);
    const ops = Array.from({ length: 100 }, (_, i) => (i % 5 === 4 ? 1 : -1));
    const results = await Promise.allSettled(ops.map((q) => inv.modifyInventory(u.id, potion, q)));
    const takesOk = results.filter((r, i) => ops[i]! < 0 && r.status === 'fulfilled').length;
    for (const f of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(f.reason).toMatchObject({ code: 'insufficient_quantity' });
      expect((f.reason as { extensions: { quantity: number } }).extensions.quantity).toBe(0);
    }
    expect(results.filter((r, i) => ops[i]! > 0 && r.status === 'rejected')).toEqual([]);
    const held = (await inv.inventory(u.id)).items.find((i) => i.item_id === potion)?.quantity ?? 0;
    expect(held).toBe(20 + 20 - takesOk);
    const ledger = await inv.ledger(u.id, { kind: 'item', itemId: potion });
    let running = 0;
    for (const l of ledger) {
      expect(l.balance_before).toBe(running);
      running += l.delta;
      expect(l.balance_after).toBe(running);
      expect(running).toBeGreaterThanOrEqual(0);
    }
    expect(running).toBe(held);

    const v = await createUser(t, 'public');
    await inv.modifyInventory(v.id, sword, 30);
    const takes = await Promise.allSettled(
      Array.from({ length: 100 }, () => inv.modifyInventory(v.id, sword, -1)),
    );
    expect(takes.filter((r) => r.status === 'fulfilled')).toHaveLength(30);
    expect((await inv.inventory(v.id)).items).toEqual([]);
  });

  it('keeps the ledger append-only', async () => {
    const u = await createUser(t, 'public');
    await t.deps.services.inventory.modifyCurrency(u.id, 1);
    await expect(
      sql`update economy_ledger set delta = 2 where user_id = ${u.id}`.execute(t.deps.db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`delete from economy_ledger where user_id = ${u.id}`.execute(t.deps.db)).rejects.toThrow(
      /append-only/,
    );
  });
});

describe('director tool commands (rule 3)', () => {
  it('changes coins and items and writes a timeline event for each', async () => {
    const u = await createUser(t, 'public');
    const assistant = await t.deps.services.characters.assistantUserId();
    const inv = t.deps.services.inventory;
    const coins = await inv.directorModifyCurrency({
      userId: u.id,
      amount: 25,
      actorUserId: assistant,
      reason: 'quest reward',
    });
    expect(coins.change).toMatchObject({ before: 0, after: 25 });
    expect(coins.event).toMatchObject({
      eventType: 'currency_changed',
      userId: u.id,
      source: 'director',
      metadata: { amount: 25, before: 0, after: 25 },
    });
    const item = await inv.directorModifyInventory({
      userId: u.id,
      itemId: sword,
      quantity: 1,
      actorUserId: assistant,
    });
    expect(item.event).toMatchObject({
      eventType: 'inventory_changed',
      metadata: { itemName: 'Sword', quantity: 1, after: 1 },
    });
    await expect(
      inv.directorModifyCurrency({ userId: u.id, amount: -26, actorUserId: assistant }),
    ).rejects.toMatchObject({ code: 'insufficient_funds' });
    const ledger = await inv.ledger(u.id);
    expect(ledger.map((l) => [l.actor_kind, l.timeline_event_id])).toEqual([
      ['director', coins.event.id],
      ['director', item.event.id],
    ]);
    expect(await inv.promptSummary(u.id)).toBe('Sword x 1\nEnergy coins: 25');
    // The refused change left no event behind.
    const events = await t.deps.services.timeline.list({ userId: u.id, limit: 10 });
    expect(events.map((e) => e.eventType)).toEqual(['inventory_changed', 'currency_changed']);
  });
});

describe('idempotency keys', () => {
  it('are forgotten after the retry window', async () => {
    await sql`insert into idempotency_keys (scope, key, fingerprint, created_at) values ('old', 'k', 'f', now() - interval '25 hours'), ('new', 'k', 'f', now())`.execute(
      t.deps.db,
    );
    await deleteExpiredIdempotencyKeys(t.deps.db, 24);
    const left = await t.deps.db
      .selectFrom('idempotency_keys')
      .select('scope')
      .where('scope', 'in', ['old', 'new'])
      .execute();
    expect(left).toEqual([{ scope: 'new' }]);
  });
});
