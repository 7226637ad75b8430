// Inventory and currency (spec: "Inventory endpoints" rules 1-4; the rules' tables are in
// inventory.rules.test.ts): every route (items, the admin's item CRUD, reading and modifying an
// inventory), overdrafts, validation, who may call, and idempotent replays. Concurrency, the
// ledger, the director's commands and the idempotency keys' expiry are in
// inventory.ledger.test.ts; the app, users and items in inventory.fixtures.ts.
import { describe, expect, it } from 'vitest';
import { createUser } from '../../../test/harness.js';
import { admin, other, player, potion, sword, t, useInventoryApp } from './inventory.fixtures.js';

useInventoryApp();

describe('items', () => {
  it('lists items and shows one; unknown → 404; needs a token', async () => {
    const list = await t.api('GET', '/api/items', { token: player.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { name: string }) => i.name)).toEqual(
      expect.arrayContaining(['Sword', 'Potion']),
    );
    const one = await t.api('GET', `/api/items/${potion}`, { token: player.accessToken });
    expect(one.body).toEqual({
      id: potion,
      name: 'Potion',
      description: 'heals',
      type: 'consumable',
      metadata: { hp: 10 },
    });
    expect((await t.api('GET', '/api/items/999999', { token: player.accessToken })).status).toBe(404);
    expect((await t.api('GET', '/api/items/abc', { token: player.accessToken })).status).toBe(400);
    expect((await t.api('GET', '/api/items')).status).toBe(401);
  });

  it('admin CRUD: create, replace, delete; bad input 400; non-admin 403', async () => {
    const created = await t.api('POST', '/api/admin/data/items', {
      token: admin.accessToken,
      body: { name: 'Key', description: 'opens', type: 'key' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Key', type: 'key', metadata: {} });
    const id = created.body.id;
    const put = await t.api('PUT', `/api/admin/data/items/${id}`, {
      token: admin.accessToken,
      body: { name: 'Gold key', description: 'opens more', type: 'key', metadata: { door: 1 } },
    });
    expect(put.body).toEqual({
      id,
      name: 'Gold key',
      description: 'opens more',
      type: 'key',
      metadata: { door: 1 },
    });
    expect(
      (
        await t.api('POST', '/api/admin/data/items', {
          token: admin.accessToken,
          body: { name: '', type: 'key' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await t.api('POST', '/api/admin/data/items', {
          token: player.accessToken,
          body: { name: 'X', type: 'key' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await t.api('PUT', `/api/admin/data/items/${id}`, {
          token: player.accessToken,
          body: { name: 'X', type: 'key' },
        })
      ).status,
    ).toBe(403);
    expect((await t.api('DELETE', `/api/admin/data/items/${id}`, { token: player.accessToken })).status).toBe(
      403,
    );
    expect((await t.api('DELETE', `/api/admin/data/items/${id}`, { token: admin.accessToken })).status).toBe(
      204,
    );
    expect((await t.api('DELETE', `/api/admin/data/items/${id}`, { token: admin.accessToken })).status).toBe(
      404,
    );
    expect(
      (
        await t.api('PUT', `/api/admin/data/items/${id}`, {
          token: admin.accessToken,
          body: { name: 'X', type: 'key' },
        })
      ).status,
    ).toBe(404);
  });
});

describe('GET /api/inventory and POST /api/inventory/modify', () => {
  it('gives, takes and reports the inventory with the balance', async () => {
    const u = await createUser(t, 'public');
    const give = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, itemId: sword, quantity: 2 },
    });
    expect(give.status).toBe(200);
    expect(give.body).toEqual({
      items: [
        { item_id: sword, name: 'Sword', description: 'sharp', type: 'weapon', metadata: {}, quantity: 2 },
      ],
      energy_coins: 0,
    });
    const coins = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, amount: 50 },
    });
    expect(coins.body.energy_coins).toBe(50);
    // Reaching 0 removes the record (rule 1).
    const take = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, itemId: sword, quantity: -2 },
    });
    expect(take.body).toEqual({ items: [], energy_coins: 50 });
    const rows = await t.deps.db
      .selectFrom('user_inventory')
      .selectAll()
      .where('user_id', '=', u.id)
      .execute();
    expect(rows).toEqual([]);
    const mine = await t.api('GET', '/api/inventory', { token: u.accessToken });
    expect(mine.body).toEqual({ items: [], energy_coins: 50 });
    expect(await t.deps.services.inventory.promptSummary(u.id)).toBe('(no items)\nEnergy coins: 50');
  });

  it('gives each of many users read at once their own items and balance (the reads are batched)', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => createUser(t, 'public')));
    for (const [i, u] of users.entries()) {
      if (i % 3 !== 2) await t.deps.services.inventory.modifyInventory(u.id, sword, i + 1);
      if (i % 2 === 0) await t.deps.services.inventory.modifyInventory(u.id, potion, 10 + i);
      if (i > 0) await t.deps.services.inventory.modifyCurrency(u.id, 100 * i);
    }
    // Read together, the second round while the first one's statement may still run.
    const reads = await Promise.all(
      [...users, ...users].map((u) => t.deps.services.inventory.inventory(u.id)),
    );
    for (const [n, view] of reads.entries()) {
      const i = n % users.length;
      const expected = [
        ...(i % 3 !== 2 ? [{ item_id: sword, quantity: i + 1 }] : []),
        ...(i % 2 === 0 ? [{ item_id: potion, quantity: 10 + i }] : []),
      ];
      expect(view.items.map(({ item_id, quantity }) => ({ item_id, quantity }))).toEqual(expected);
      expect(view.energy_coins).toBe(100 * i);
    }
    const summaries = await Promise.all(users.map((u) => t.deps.services.inventory.promptSummary(u.id)));
    expect(summaries[2]).toBe('Potion x 12\nEnergy coins: 200');
  });

  it('refuses overdrafts with the contract codes and extensions', async () => {
    const u = await createUser(t, 'public');
    await t.deps.services.inventory.modifyCurrency(u.id, 5);
    const broke = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, amount: -6 },
    });
    expect(broke.status).toBe(409);
    expect(broke.body).toMatchObject({ code: 'insufficient_funds', balance: 5 });
    expect(broke.headers.get('content-type')).toContain('application/problem+json');
    await t.deps.services.inventory.modifyInventory(u.id, potion, 1);
    const few = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, itemId: potion, quantity: -2 },
    });
    expect(few.status).toBe(409);
    expect(few.body).toMatchObject({ code: 'insufficient_quantity', quantity: 1 });
    const none = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, itemId: sword, quantity: -1 },
    });
    expect(none.body).toMatchObject({ code: 'insufficient_quantity', quantity: 0 });
    expect(
      (
        await t.api('POST', '/api/inventory/modify', {
          token: admin.accessToken,
          body: { userId: u.id, itemId: 999999, quantity: 1 },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await t.api('POST', '/api/inventory/modify', {
          token: admin.accessToken,
          body: { userId: 999999, amount: 1 },
        })
      ).status,
    ).toBe(404);
    expect((await t.api('GET', '/api/inventory', { token: u.accessToken })).body).toMatchObject({
      energy_coins: 5,
    });
  });

  it('validates the body', async () => {
    for (const body of [
      { userId: player.id, amount: 0 },
      { userId: player.id, itemId: sword, quantity: 0 },
      { userId: player.id },
      { amount: 5 },
      { userId: player.id, amount: 1.5 },
      { userId: player.id, amount: 5, extra: 1 },
    ]) {
      const r = await t.api('POST', '/api/inventory/modify', { token: admin.accessToken, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const badKey = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: player.id, amount: 1 },
      headers: { 'idempotency-key': 'x'.repeat(201) },
    });
    expect(badKey.status).toBe(400);
  });

  it('is admin-only; a player sees only their own inventory', async () => {
    expect(
      (await t.api('POST', '/api/inventory/modify', { body: { userId: player.id, amount: 5 } })).status,
    ).toBe(401);
    expect(
      (
        await t.api('POST', '/api/inventory/modify', {
          token: player.accessToken,
          body: { userId: player.id, amount: 5 },
        })
      ).status,
    ).toBe(403);
    expect((await t.api('GET', '/api/inventory')).status).toBe(401);
    expect(
      (await t.api('GET', `/api/inventory?userId=${other.id}`, { token: player.accessToken })).status,
    ).toBe(403);
    await t.deps.services.inventory.modifyCurrency(other.id, 7);
    const seen = await t.api('GET', `/api/inventory?userId=${other.id}`, { token: admin.accessToken });
    expect(seen.body.energy_coins).toBe(7);
    expect((await t.api('GET', '/api/inventory', { token: player.accessToken })).body.energy_coins).toBe(0);
  });

  it('replays the first answer for a repeated Idempotency-Key and changes nothing', async () => {
    const u = await createUser(t, 'public');
    const headers = { 'idempotency-key': 'award-1' };
    const first = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, amount: 30 },
      headers,
    });
    expect(first.body.energy_coins).toBe(30);
    // Change the state in between: the replay still answers what the first request answered.
    await t.deps.services.inventory.modifyCurrency(u.id, 1);
    const again = await Promise.all(
      [1, 2, 3].map(() =>
        t.api('POST', '/api/inventory/modify', {
          token: admin.accessToken,
          body: { userId: u.id, amount: 30 },
          headers,
        }),
      ),
    );
    for (const r of again) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual(first.body);
      expect(r.headers.get('idempotent-replayed')).toBe('true');
    }
    const ledger = await t.deps.services.inventory.ledger(u.id, { kind: 'currency' });
    expect(ledger.map((l) => l.delta)).toEqual([30, 1]);
    expect(ledger[0]!.idempotency_key).toBe('award-1');
    // The same key with another body is a conflict; another caller's key is their own.
    const clash = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, amount: 31 },
      headers,
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('conflict');
    const admin2 = await createUser(t, 'developer');
    const theirs = await t.api('POST', '/api/inventory/modify', {
      token: admin2.accessToken,
      body: { userId: u.id, amount: 30 },
      headers,
    });
    expect(theirs.body.energy_coins).toBe(61);
    // A refused request's key keeps its refusal: the retry is answered the same, even once the
    // coins are there (src/platform/http/idempotency.test.ts has the storms).
    const k = { 'idempotency-key': 'spend-too-much' };
    expect(
      (
        await t.api('POST', '/api/inventory/modify', {
          token: admin.accessToken,
          body: { userId: u.id, amount: -100 },
          headers: k,
        })
      ).status,
    ).toBe(409);
    await t.deps.services.inventory.modifyCurrency(u.id, 100);
    const retried = await t.api('POST', '/api/inventory/modify', {
      token: admin.accessToken,
      body: { userId: u.id, amount: -100 },
      headers: k,
    });
    expect(retried.status).toBe(409);
    expect(retried.body.code).toBe('insufficient_funds');
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await t.deps.services.inventory.inventory(u.id)).toMatchObject({ energy_coins: 161 });
  });
});
