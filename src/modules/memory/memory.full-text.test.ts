// Retrieval's full-text side reads its scope arm by arm (migration 0104): the owner's chunks
// through a GIN index on (user_id, tsv), the world tier through its own, the NPC's core tier;
// never another user's chunks, and never every user's index entries. Both lanes.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { captureSql } from '../../../test/sql-snapshot.js';
import { transaction } from '../../platform/db/database.js';
import * as search from './memory.search.repository.js';

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let npc: TestUser;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await createTestApp();
  [alice, bob, npc] = await Promise.all([
    createUser(t, 'public'),
    createUser(t, 'public'),
    createUser(t, 'npc', { name: 'Mira' }),
  ]);
  const m = t.deps.services.memory;
  const add = async (
    key: string,
    userId: number,
    content: string,
    source: 'shared' | 'world' | 'assistant_core',
  ) => {
    const [made] = await m.addMemories([{ userId, content, source, createdBy: userId }]);
    ids[key] = made!.id;
  };
  await add('alice', alice.id, 'Alice keeps a lantern by the harbour.', 'shared');
  await add('aliceOther', alice.id, 'Alice bakes bread on Sundays.', 'shared');
  await add('bob', bob.id, 'Bob lost his lantern at the harbour.', 'shared');
  await add('world', bob.id, 'The harbour lantern is lit at dusk by the guild.', 'world');
  await add('npcCore', npc.id, 'Mira tends the harbour lantern.', 'assistant_core');
  await add('npcShared', npc.id, 'Mira whispers about the harbour lantern.', 'shared');
});
afterAll(() => t.close());

const found = async (scope: search.Scope) =>
  (await search.lexicalSearch(t.deps.db, { ...scope, text: 'harbour lantern', limit: 10 }))
    .map((r) => Number(r.memory_id))
    .sort((a, b) => a - b);
const idsOf = (...keys: string[]) => keys.map((k) => ids[k]!).sort((a, b) => a - b);

describe('memory full text by scope', () => {
  it('finds the owner, the world tier and the named NPC core tier, each once, never another user', async () => {
    expect(await found({ userId: alice.id })).toEqual(idsOf('alice', 'world'));
    expect(await found({ userId: alice.id, npcUserId: npc.id })).toEqual(idsOf('alice', 'world', 'npcCore'));
    // The NPC asking for itself: its own memories, every tier, once.
    expect(await found({ userId: npc.id, npcUserId: npc.id })).toEqual(
      idsOf('world', 'npcCore', 'npcShared'),
    );
    expect(await found({ userId: alice.id, npcUserId: npc.id, source: 'world' })).toEqual(idsOf('world'));
    // A world memory written by Bob is Bob's through the world tier, not twice.
    expect(await found({ userId: bob.id })).toEqual(idsOf('bob', 'world'));
    const rows = await search.searchChunks(t.deps.db, {
      userId: alice.id,
      text: 'harbour lantern',
      candidates: 10,
      index: search.pgvectorIndex,
    });
    expect(rows.map((r) => Number(r.memory_id)).sort((a, b) => a - b)).toEqual(idsOf('alice', 'world'));
    expect(rows.every((r) => r.rank !== null && r.rank > 0 && r.distance === null)).toBe(true);
  });

  it('searches inside a transaction as outside one', async () => {
    // Outside one, the full-text side takes a connection of its own for its first reads; a
    // transaction is one connection already.
    const rows = await transaction(t.deps.db, ({ trx }) =>
      search.searchChunks(trx, {
        userId: alice.id,
        text: 'harbour lantern',
        candidates: 10,
        index: search.pgvectorIndex,
      }),
    );
    expect(rows.map((r) => Number(r.memory_id)).sort((a, b) => a - b)).toEqual(idsOf('alice', 'world'));
  });

  it("reads the owner's and the world's own index entries", async () => {
    const indexes = await sql<{ indexname: string }>`
      select indexname from pg_indexes where schemaname = current_schema() and tablename = 'memory_chunks'`.execute(
      t.deps.db,
    );
    const names = indexes.rows.map((r) => r.indexname);
    expect(names).toEqual(expect.arrayContaining(['memory_chunks_owner_text', 'memory_chunks_world_text']));
    // The index over every chunk's words is gone: nothing reads every user's entries.
    expect(names).not.toContain('memory_chunks_tsv');

    // A table worth an index: thousands of chunks of Alice's and Bob's without the query's words
    // (rows written here directly: embeddings play no part), so that reading the words' entries
    // of everyone looks cheap to the planner.
    await sql`
      with m as (
        insert into memories (user_id, content, source, tier)
        select case when g % 2 = 0 then ${alice.id} else ${bob.id} end::bigint,
          case when g % 2 = 0 then 'Alice counted ' || g || ' gulls over the quay'
               else 'Bob saw ' || g || ' boats at the pier' end, 'shared', 'shared'
        from generate_series(1, 6000) g returning id, user_id, content)
      insert into memory_chunks (memory_id, user_id, tier, source, chunk_index, content)
      select id, user_id, 'shared', 'shared', 0, content from m`.execute(t.deps.db);
    await sql`analyze memory_chunks`.execute(t.deps.db);
    const [text] = await captureSql((db) =>
      search.searchChunks(db, {
        userId: alice.id,
        text: 'harbour lantern',
        candidates: 10,
        index: search.pgvectorIndex,
      }),
    );
    // With a sequential scan ruled out, the plan shows the index each branch reads.
    const plan = await transaction(t.deps.db, async ({ trx }) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const explained = await trx.executeQuery({
        ...text!,
        sql: `explain (costs off) ${text!.sql}`,
      });
      return explained.rows.map((r) => (r as { 'QUERY PLAN': string })['QUERY PLAN']).join('\n');
    });
    // An index read for the query's words is limited to the owner's rows, or is the world's own.
    const lines = plan.split('\n');
    const wordReads = lines.flatMap((line, i) =>
      /Index Cond: .*tsv @@/.test(line) ? [`${lines[i - 1]!.trim()} ${line.trim()}`] : [],
    );
    for (const read of wordReads)
      expect(read).toMatch(/on memory_chunks_owner_text .*user_id = |on memory_chunks_world_text /);
    expect(plan).toMatch(/on memory_chunks_owner(_text)?\n\s*Index Cond: \(+user_id = /);
    expect(plan).not.toContain('Seq Scan');
  });
});
