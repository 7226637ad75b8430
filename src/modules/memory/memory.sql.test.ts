// The SQL the memory repository sends, snapshotted (sql/*.sql): retrieval's two sides with and
// without pgvector, the sketch index's update read, the batched writes and the chat turn's reads.
// A query change shows in review as a change of these files (`npx vitest run -u` rewrites them).
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as embeddings from './memory.embeddings.repository.js';
import * as repo from './memory.repository.js';
import * as search from './memory.search.repository.js';

const embedding = { values: [0.1, 0.2, 0.3], model: 'text-embedding-3-small' };
const scope = { userId: 7, npcUserId: 2 };

describe('memory repository SQL', () => {
  it('retrieval: the vector and full-text sides, with pgvector and by the sketch index', async () => {
    const text = await sqlSnapshot({
      'searchChunks (pgvector)': (db) =>
        search.searchChunks(db, {
          ...scope,
          text: 'harbour lights',
          candidates: 40,
          embedding,
          index: search.pgvectorIndex,
        }),
      "searchChunks (a scene's characters, and their reach into the player's memories)": (db) =>
        search.searchChunks(db, {
          userId: 7,
          npcUserIds: [2, 3],
          conversationIds: [11, 12],
          text: 'harbour lights',
          candidates: 40,
          embedding,
          index: search.pgvectorIndex,
        }),
      // The full-text side is read together with others (one row, which the snapshot's database
      // does not answer): the vector side is asked of the index itself.
      'pgvector nearest (the vector side)': (db) =>
        search.pgvectorIndex
          .open(db, scope)
          .nearest({ model: embedding.model, dim: 3, query: embedding.values, pool: 80, count: 40 }, db),
      "pgvector nearest (a reach into the player's memories)": (db) =>
        search.pgvectorIndex
          .open(db, { userId: 7, npcUserIds: [2, 3], conversationIds: [11, 12] })
          .nearest({ model: embedding.model, dim: 3, query: embedding.values, pool: 80, count: 40 }, db),
      'searchChunks (full text only)': (db) =>
        search.searchChunks(db, {
          ...scope,
          text: 'harbour lights',
          candidates: 40,
          index: search.pgvectorIndex,
        }),
      'sketchRows (a part brought up to date, and the world read whole)': (db) =>
        search.sketchRows(db, [
          { userId: 7, since: '1234' },
          { userId: undefined, since: undefined },
        ] as never),
      'sketchChanges (held parts brought up to date)': (db) =>
        search.sketchChanges(db, [{ userId: 7, since: '1234' }]),
      findByIds: (db) => repo.findByIds(db, [3, 5, 8]),
      'withNeighbours (the reranked memories and the ones written around them)': (db) =>
        search.withNeighbours(db, [3, 5, 8]),
      newestInScope: (db) => search.newestInScope(db, { ...scope, source: 'shared' }, 10),
      lexicalSearch: (db) => search.lexicalSearch(db, { ...scope, text: 'harbour', limit: 10 }),
    });
    await expect(text).toMatchFileSnapshot('./sql/memory.retrieval.sql');
  });

  it('writes: memories with their chunks in one statement, embeddings, the embedding queue', async () => {
    const memory = {
      userId: 7,
      content: 'The harbour lights are lit at dusk.',
      source: 'shared' as const,
      tier: 'shared' as const,
      metadata: { conversationId: 4 },
      conversationId: 4,
      createdBy: 7,
    };
    const chunks = [{ memory: 0, index: 0, content: memory.content }];
    const text = await sqlSnapshot({
      'insertMemoriesWithChunks (queued for a remote embedder)': (db) =>
        repo.insertMemoriesWithChunks(db, [memory], chunks, { queue: true }),
      'insertMemoriesWithChunks (embedded here)': (db) =>
        repo.insertMemoriesWithChunks(db, [memory], chunks, { queue: false }),
      claimPending: (db) =>
        embeddings.claimPending(db, {
          limit: 64,
          leaseSeconds: 300,
          holder: '00000000-0000-4000-8000-000000000000',
          memoryIds: [1, 2],
        }),
      releaseClaims: (db) => embeddings.releaseClaims(db, [1, 2]),
      claimedFor: (db) => embeddings.claimedFor(db),
      recordEmbedFailure: (db) => embeddings.recordEmbedFailure(db, [1, 2], 'timeout'),
      deleteMemory: (db) => repo.deleteMemory(db, 3, 7),
      countByTier: (db) => repo.countByTier(db),
    });
    await expect(text).toMatchFileSnapshot('./sql/memory.writes.sql');
  });
});
