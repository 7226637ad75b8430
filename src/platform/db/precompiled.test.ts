// A precompiled statement sends the same SQL as the builder it comes from, with each call's
// arguments in their places and the builder's constants kept.
import { describe, expect, it } from 'vitest';
import { captureSql } from '../../../test/sql-snapshot.js';
import { precompiled } from './precompiled.js';

describe('precompiled', () => {
  const query = precompiled((db, userId: number, isDefault: boolean, title: string) =>
    db
      .selectFrom('conversations')
      .select(['id'])
      .where('title', '=', title)
      .where('user_id', '=', userId)
      .where('is_default', '=', isDefault)
      .limit(5),
  );

  it("puts each call's arguments where the builder put them, and keeps its constants", async () => {
    const seen = await captureSql(async (db) => {
      await query(db, 7, true, 'a');
      await query(db, 8, false, 'b');
    });
    const direct = await captureSql((db) =>
      db
        .selectFrom('conversations')
        .select(['id'])
        .where('title', '=', 'b')
        .where('user_id', '=', 8)
        .where('is_default', '=', false)
        .limit(5)
        .execute(),
    );
    expect(seen.map((q) => q.parameters)).toEqual([
      ['a', 7, true, 5],
      ['b', 8, false, 5],
    ]);
    expect(seen[1]!.sql).toBe(direct[0]!.sql);
    expect(seen[1]!.parameters).toEqual(direct[0]!.parameters);
  });

  it('refuses a builder that does not pass an argument as one parameter', async () => {
    const inlined = precompiled((db, id: number, _unused: string) =>
      db.selectFrom('users').select('id').where('id', '=', id),
    );
    let error: unknown;
    await captureSql(async (db) => {
      await inlined(db, 1, 'x').catch((e: unknown) => (error = e));
    });
    expect(String(error)).toMatch(/each argument must be exactly one parameter/);
  });
});
