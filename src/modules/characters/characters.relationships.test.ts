// GET /api/admin/data/relationships (contract: "Admin zones"): each relationship as PUT answers it,
// filtered by player and character.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'developer');
});
afterAll(() => t.close());

describe('GET /api/admin/data/relationships', () => {
  it('lists relationships as PUT answers them, filtered; refuses bad input and non-admins', async () => {
    const [alice, bob] = [await createUser(t, 'public'), await createUser(t, 'public')];
    const mira = await t.deps.services.characters.createNpc({ name: 'Mira', description: 'a smith' });
    const oren = await t.deps.services.characters.createNpc({ name: 'Oren', description: 'a ferryman' });
    const put = async (userId: number, npcUserId: number, affinity: number) => {
      const r = await t.api('PUT', '/api/admin/data/relationships', {
        token: admin.accessToken,
        body: { userId, npcUserId, affinity, flags: { met: true } },
      });
      expect(r.status).toBe(200);
      return r.body;
    };
    const a1 = await put(alice.id, mira.id, 0.5);
    const a2 = await put(alice.id, oren.id, -0.25);
    const b1 = await put(bob.id, mira.id, 1);
    const list = (q: string, token = admin.accessToken) =>
      t.api('GET', `/api/admin/data/relationships${q}`, { token });

    expect((await list(`?userId=${alice.id}`)).body).toEqual({ relationships: [a1, a2] });
    expect((await list(`?npcUserId=${mira.id}`)).body.relationships).toEqual([a1, b1]);
    expect((await list(`?userId=${bob.id}&npcUserId=${mira.id}`)).body.relationships).toEqual([b1]);
    expect((await list(`?userId=${bob.id}&npcUserId=${oren.id}`)).body.relationships).toEqual([]);
    const all = (await list('')).body.relationships;
    expect(all).toEqual(expect.arrayContaining([a1, a2, b1]));
    expect((await list('?userId=x')).status).toBe(400);
    expect((await list('', alice.accessToken)).status).toBe(403);
    expect((await t.api('GET', '/api/admin/data/relationships')).status).toBe(401);
  });
});
