// Idempotency keys replay the first answer, a refusal too (a 4xx other than 401/403/429): through
// the two routes that take them, inventory changes and sync ingest. A refused key stays refused
// after the state changed (the user got the coins), and a storm of repeats yields exactly one
// outcome per key however the requests interleave.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestApp,
  createUser,
  type ApiResponse,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;
let writeKey: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso');
  writeKey = (await t.deps.services.auth.createApiKey('writer', ['sync:write'], null)).key;
});
afterAll(() => t.close());

const modify = (key: string, body: unknown) =>
  t.api('POST', '/api/inventory/modify', {
    token: admin.accessToken,
    body,
    headers: { 'idempotency-key': key },
  });

const balance = async (userId: number) => (await t.deps.services.inventory.inventory(userId)).energy_coins;
const currencyLedger = (userId: number) => t.deps.services.inventory.ledger(userId, { kind: 'currency' });

/** What a client sees of an answer: status, body, whether it says it is a replay. */
const outcome = (r: ApiResponse<unknown>) => ({ status: r.status, body: r.body });

describe('a refused first answer', () => {
  it('is replayed for the same key after the user has been given enough coins', async () => {
    const u = await createUser(t, 'public');
    const first = await modify('spend-before-funds', { userId: u.id, amount: -50 });
    expect(first.status).toBe(409);
    expect(first.body).toMatchObject({ code: 'insufficient_funds', balance: 0 });
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    await t.deps.services.inventory.modifyCurrency(u.id, 100);
    const again = await modify('spend-before-funds', { userId: u.id, amount: -50 });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toContain('application/problem+json');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // Nothing ran: the coins are all there and the ledger has the grant alone.
    expect(await balance(u.id)).toBe(100);
    expect((await currencyLedger(u.id)).map((l) => l.delta)).toEqual([100]);

    // The same key with another body is still a conflict; a new key runs.
    expect((await modify('spend-before-funds', { userId: u.id, amount: -40 })).body.code).toBe('conflict');
    const fresh = await modify('spend-after-funds', { userId: u.id, amount: -50 });
    expect(fresh.status).toBe(200);
    expect(fresh.body.energy_coins).toBe(50);
  });

  it('is replayed for other refusals too (404, 400), but 401/403 store nothing', async () => {
    const missing = await modify('no-such-user', { userId: 99_999_999, amount: 5 });
    expect(missing.status).toBe(404);
    const replay = await modify('no-such-user', { userId: 99_999_999, amount: 5 });
    expect(outcome(replay)).toEqual(outcome(missing));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    // A player is refused (403) before any key is looked at: the admin's key is untouched.
    const u = await createUser(t, 'public');
    const player = await createUser(t, 'public');
    const forbidden = await t.api('POST', '/api/inventory/modify', {
      token: player.accessToken,
      body: { userId: u.id, amount: 5 },
      headers: { 'idempotency-key': 'not-yours' },
    });
    expect(forbidden.status).toBe(403);
    const theirs = await t.api('POST', '/api/inventory/modify', {
      token: player.accessToken,
      body: { userId: u.id, amount: 5 },
      headers: { 'idempotency-key': 'not-yours' },
    });
    expect(theirs.status).toBe(403);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a sync ingest refused by the foreign key is stored and replayed (the transaction recovers)', async () => {
    const headers = { 'idempotency-key': 'ingest-unknown-user' };
    const body = { userId: 99_999_999, eventType: 'ghost' };
    const first = await t.api('POST', '/api/sync/ingest-event', { apiKey: writeKey, body, headers });
    expect(first.status).toBe(400);
    expect(first.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'userId' }] });
    const again = await t.api('POST', '/api/sync/ingest-event', { apiKey: writeKey, body, headers });
    expect(outcome(again)).toEqual(outcome(first));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // No event was written, and the key space goes on working.
    const u = await createUser(t, 'public');
    const ok = await t.api('POST', '/api/sync/ingest-event', {
      apiKey: writeKey,
      body: { userId: u.id, eventType: 'real' },
      headers: { 'idempotency-key': 'ingest-known-user' },
    });
    expect(ok.status).toBe(201);
    expect(await t.deps.services.timeline.list({ eventType: 'ghost', limit: 10 })).toHaveLength(0);
  });
});

describe('a storm of repeats', () => {
  it('20 parallel requests with one key, funds for none: one refusal, replayed, even once funded', async () => {
    const u = await createUser(t, 'public');
    await t.deps.services.inventory.modifyCurrency(u.id, 5);
    const all = await Promise.all(
      Array.from({ length: 20 }, () => modify('storm-one-key', { userId: u.id, amount: -10 })),
    );
    for (const r of all) expect(outcome(r)).toEqual(outcome(all[0]!));
    expect(all[0]!.body).toMatchObject({ code: 'insufficient_funds', balance: 5 });
    // Exactly one of them ran; the others are marked as replays.
    expect(all.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    await t.deps.services.inventory.modifyCurrency(u.id, 100);
    const later = await Promise.all(
      Array.from({ length: 5 }, () => modify('storm-one-key', { userId: u.id, amount: -10 })),
    );
    for (const r of later) expect(outcome(r)).toEqual(outcome(all[0]!));
    expect(await balance(u.id)).toBe(105);
  });

  it('spends and grants on many keys, each repeated in parallel: one outcome per key', async () => {
    const u = await createUser(t, 'public');
    await t.deps.services.inventory.modifyCurrency(u.id, 30);
    // Ten spends of 10 where 30 coins are there, and five grants of 10 landing among them: some
    // spends are refused first and could pass later, once a grant committed.
    const keys = [
      ...Array.from({ length: 10 }, (_, i) => ({ key: `storm-spend-${i}`, amount: -10 })),
      ...Array.from({ length: 5 }, (_, i) => ({ key: `storm-grant-${i}`, amount: 10 })),
    ];
    // Every key's copies are spread over the storm: a round of every key, then another, then a
    // third (the grants of a round land before the next round's spends).
    const sends = [0, 1, 2].flatMap(() => keys);
    const answers = await Promise.all(
      sends.map(async ({ key, amount }) => ({ key, r: await modify(key, { userId: u.id, amount }) })),
    );
    const byKey = new Map<string, ApiResponse<any>[]>();
    for (const { key, r } of answers) byKey.set(key, [...(byKey.get(key) ?? []), r]);
    let spent = 0;
    for (const { key, amount } of keys) {
      const rs = byKey.get(key)!;
      const statuses = rs.map((r) => r.status);
      for (const r of rs) expect(outcome(r), `${key}: ${statuses.join(',')}`).toEqual(outcome(rs[0]!));
      expect(
        rs.filter((r) => r.headers.get('idempotent-replayed') === null),
        key,
      ).toHaveLength(1);
      if (amount > 0) expect(rs[0]!.status, key).toBe(200);
      else if (rs[0]!.status === 200) spent++;
      else expect(rs[0]!.body.code, key).toBe('insufficient_funds');
    }
    // The ledger holds exactly the changes that were answered 200, once each.
    const ledger = await currencyLedger(u.id);
    expect(ledger.filter((l) => l.delta === -10)).toHaveLength(spent);
    expect(ledger.filter((l) => l.delta === 10)).toHaveLength(5);
    expect(await balance(u.id)).toBe(30 + 50 - 10 * spent);
  });
});
