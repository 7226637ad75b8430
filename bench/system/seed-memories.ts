// The population's memories, written in bulk by the service's own code: a process of its own with
// the nodes' configuration (their database, their embedding model on the fake model server) calls
// the memory module's `addMemories` a thousand at a time, then waits until every chunk is
// embedded. The public API has no batch route for memories: 500,000 single requests took most of
// an hour here, where this takes minutes; the rows, chunks and embeddings are the ones the route
// writes. The nodes' job workers (and this process's) embed the chunks.
// Run by bench/system.ts: npx tsx bench/system/seed-memories.ts '<options JSON>'
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import type { Options } from './options.js';
import { memoryText } from './seed.js';

const BATCH = 1000;

const o = JSON.parse(process.argv[2] ?? '{}') as Options;
const say = (line: string) => process.stdout.write(`${JSON.stringify({ say: line })}\n`);
const deps = await createDeps(loadConfig({ ...process.env, LOG_LEVEL: 'warn', MEMORY_EMBED_BATCH: '500' }));
try {
  const t0 = performance.now();
  const users = (
    await sql<{
      id: number;
    }>`select id from users where email like 'player-%@system-bench.test' order by id`.execute(deps.db)
  ).rows.map((r) => r.id);
  if (users.length !== o.users) throw new Error(`expected ${o.users} bench users, found ${users.length}`);
  const total = users.length * o.memoriesPerUser;
  let written = 0;
  for (let i = 0; i < o.memoriesPerUser; i++)
    for (let u = 0; u < users.length; u += BATCH) {
      const batch = users.slice(u, u + BATCH);
      await deps.services.memory.addMemories(
        batch.map((userId) => ({ userId, source: 'shared', content: memoryText(userId, i, o.memoryChars) })),
      );
      written += batch.length;
      if (written % 50_000 < batch.length) say(`seed: ${written} of ${total} memories written`);
    }
  const writtenAt = performance.now();
  say(`seed: ${total} memories written in ${((writtenAt - t0) / 1000).toFixed(1)} s; embedding`);
  for (;;) {
    const s = await deps.services.memory.embeddingStatus();
    if (s.progress >= 1) break;
    say(`seed: embedded ${(s.progress * 100).toFixed(1)} %`);
    await new Promise((r) => setTimeout(r, 5000));
  }
  const embeddedAt = performance.now();
  process.stdout.write(
    `${JSON.stringify({ done: { written: (writtenAt - t0) / 1000, embedded: (embeddedAt - t0) / 1000 } })}\n`,
  );
} finally {
  await deps.close();
}
