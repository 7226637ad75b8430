// A change of embedding model never strands memories: after a restart with another model, the
// stored memories are re-embedded in the background (or by `memory reembed`), once, resumably,
// and search keeps working meanwhile. On PGlite (a data directory, so the database outlives the
// process) and on PostgreSQL (the first app's schema).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, isPostgres, type TestApp } from '../../../test/harness.js';
import { dropSchema } from '../../../test/schema.js';
import { LEXICAL_EMBEDDING_MODEL } from '../../platform/models/lexical-embedder.js';
import { SEMANTIC_EMBEDDING_MODEL } from '../../platform/models/semantic-embedder.js';

const dir = isPostgres() ? null : mkdtempSync(join(tmpdir(), 'ap-reembed-'));
const base = dir ? { DATA_DIR: dir, PGVECTOR: 'off', DATABASE_URL: undefined } : {};
const apps: TestApp[] = [];

async function start(env: Record<string, string | undefined>): Promise<TestApp> {
  const first = apps[0];
  const app = await createTestApp(
    { ...base, MEMORY_EMBED_BATCH: '4', ...env },
    first?.schema ? { sameDatabaseAs: first } : {},
  );
  apps.push(app);
  return app;
}

async function stop(app: TestApp) {
  await app.app.close();
  await app.deps.close();
}

afterAll(async () => {
  const first = apps[0];
  if (first?.schema && process.env.DATABASE_URL) await dropSchema(process.env.DATABASE_URL, first.schema);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const models = (t: TestApp) =>
  sql<{
    model: string;
    n: number;
  }>`select model, count(*)::int as n from memory_embeddings group by model order by model`
    .execute(t.deps.db)
    .then((r) => r.rows);

describe('a change of embedding model', () => {
  // Three starts of the service on one database, the first migrating it.
  it(
    're-embeds every memory once, survives a restart in the middle, and search works throughout',
    { timeout: 120_000 },
    async () => {
      // Written under the lexical embedder.
      const before = await start({ OFFLINE_EMBEDDING_MODEL: LEXICAL_EMBEDDING_MODEL });
      const ada = await createUser(before, 'public');
      const facts = Array.from({ length: 21 }, (_, i) => `Ada planted tree number ${i} in the orchard.`);
      facts.push('Ada finished a watercolour of the harbour at dawn.');
      await before.deps.services.memory.addMemories(
        facts.map((content) => ({ userId: ada.id, source: 'shared' as const, content })),
      );
      expect(await models(before)).toEqual([{ model: LEXICAL_EMBEDDING_MODEL, n: 22 }]);
      await stop(before);

      // Restarted with the semantic embedder and no worker: the re-embedding is queued, and only
      // two batches of it are done before this process stops too.
      const middle = await start({ SERVICES: 'api' });
      const status = await middle.deps.services.memory.embeddingStatus();
      expect(status).toMatchObject({
        model: SEMANTIC_EMBEDDING_MODEL,
        total: 22,
        current: 0,
        stale: 22,
        reembedding: true,
      });
      const memory = middle.deps.services.memory;
      // The job's work, two rounds of it (embedPending is what the memory.embed job runs).
      expect(await memory.embedPending([], true, { rounds: 2, followUp: false })).toBe(8);
      expect(await models(middle)).toEqual([
        { model: SEMANTIC_EMBEDDING_MODEL, n: 8 },
        { model: LEXICAL_EMBEDDING_MODEL, n: 14 },
      ]);
      const firstDone = await sql<{ chunk_id: number; embedded_at: Date }>`
      select chunk_id, embedded_at from memory_embeddings where model = ${SEMANTIC_EMBEDDING_MODEL} order by chunk_id`.execute(
        middle.deps.db,
      );
      // Search works meanwhile: full text, plus the vector side over what is re-embedded.
      const found = await middle.api(
        'GET',
        `/api/assistant/memory?query=${encodeURIComponent('watercolour of the harbour')}`,
        {
          token: ada.accessToken,
        },
      );
      expect(found.status).toBe(200);
      expect(found.body.memories[0].content).toBe('Ada finished a watercolour of the harbour at dawn.');
      await stop(middle);

      // Started again with its worker: the queued job finishes the rest, and nothing twice.
      const after = await start({});
      await after.deps.jobs.drain(30_000);
      expect(await models(after)).toEqual([{ model: SEMANTIC_EMBEDDING_MODEL, n: 22 }]);
      const again = await sql<{ chunk_id: number; embedded_at: Date }>`
      select chunk_id, embedded_at from memory_embeddings where chunk_id = any(${firstDone.rows.map((r) => r.chunk_id)}::bigint[])
      order by chunk_id`.execute(after.deps.db);
      expect(again.rows).toEqual(firstDone.rows);
      expect(await after.deps.services.memory.embeddingStatus()).toMatchObject({
        total: 22,
        current: 22,
        stale: 0,
        pending: 0,
        reembedding: false,
        progress: 1,
      });
      const admin = await createUser(after, 'cso');
      const health = await after.api('GET', '/api/admin/health', { token: admin.accessToken });
      expect(health.body.models.memoryEmbeddings).toMatchObject({
        model: SEMANTIC_EMBEDDING_MODEL,
        current: 22,
        stale: 0,
      });
      // Asked by meaning now: no word of the query is in the memory.
      const byMeaning = await after.api(
        'GET',
        `/api/assistant/memory?query=${encodeURIComponent('what did she paint?')}`,
        {
          token: ada.accessToken,
        },
      );
      expect(byMeaning.body.memories[0].content).toBe('Ada finished a watercolour of the harbour at dawn.');

      // `memory reembed` (the command's work) finds nothing left to do.
      expect(await after.deps.services.memory.reembedHere()).toBe(0);
      await stop(after);
    },
  );
});
