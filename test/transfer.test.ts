// Every row carried between databases (`cli export` / `cli import`, platform/db/transfer.ts) and
// the embedded database's backup and restore (`cli backup` / `cli restore`). The round trip is
// checked row for row: the export of the copy equals the export of the original, table by
// table, embeddings and sequences included. On the Postgres lane the copy is an embedded
// database (PostgreSQL → PGlite → export again); on the embedded lane, another embedded one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/main.js';
import { openDatabase, sql, type DatabaseHandle } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { startEmbeddedServer, type EmbeddedServer } from '../src/platform/db/pglite-server.js';
import { exportDatabase, importDatabase } from '../src/platform/db/transfer.js';
import { createTestApp, createUser, type TestApp } from './harness.js';

let t: TestApp;
let dir: string;
let original: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ap-transfer-'));
  t = await createTestApp();
  const user = await createUser(t, 'public', { name: 'Ada' });
  for (const content of ['Ada keeps ravens.', 'Ada was born in 1815.', 'Ada likes engines.'])
    await t.deps.services.memory.addMemory({ userId: user.id, content, source: 'shared' });
  await t.deps.jobs.drain(30_000); // embedded
  original = join(dir, 'original.jsonl');
  await exportDatabase(t.deps.database, original);
}, 120_000);
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh embedded database (in memory), migrated; `pgvector: false` for the sketch variant. */
async function embedded(pgvector: boolean): Promise<DatabaseHandle> {
  const handle = await openDatabase({ url: 'memory://', dataDir: dir, poolSize: 1, poolTimeoutMs: 30_000 });
  await migrate(handle, { pgvector });
  return handle;
}

/** An export's lines by table (the header's time left out). */
function tables(file: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current = '';
  for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
    if (line.startsWith('{"table"')) out.set((current = (JSON.parse(line) as { table: string }).table), []);
    else if (line.startsWith('{"sequences"')) out.set('(sequences)', [line]);
    else if (line) out.get(current)!.push(line);
  }
  return out;
}

const count = async (h: DatabaseHandle, table: string) =>
  (await sql<{ n: number }>`select count(*)::int as n from ${sql.id(table)}`.execute(h.db)).rows[0]!.n;

describe('export and import', () => {
  it('carries every row, embeddings and sequences included, to another database and back', async () => {
    const vector = t.deps.database.capabilities.vector;
    const copy = await embedded(vector);
    try {
      const imported = await importDatabase(copy, original);
      expect(imported.skipped).toBeUndefined();
      expect(imported.tables.memory_embeddings).toBe(await count(t.deps.database, 'memory_embeddings'));
      expect(imported.tables.memory_embeddings).toBeGreaterThanOrEqual(3);
      const again = join(dir, 'again.jsonl');
      await exportDatabase(copy, again);
      const [a, b] = [tables(original), tables(again)];
      expect([...b.keys()]).toEqual([...a.keys()]);
      for (const [name, rows] of a) expect({ name, rows: b.get(name) }).toEqual({ name, rows });
    } finally {
      await copy.close();
    }
  }, 120_000);

  it('refuses a target that holds rows already, and queues every memory again across embedding kinds', async () => {
    const other = await embedded(!t.deps.database.capabilities.vector);
    try {
      const r = await importDatabase(other, original);
      expect(r.skipped).toContain('memory_embeddings');
      expect(r.requeued).toBe(await count(other, 'memory_chunks'));
      expect(await count(other, 'memories')).toBe(await count(t.deps.database, 'memories'));
      await expect(importDatabase(other, original)).rejects.toThrow(/not empty/);
    } finally {
      await other.close();
    }
  }, 120_000);
});

describe('backup and restore (embedded database)', () => {
  it('restores a backup row for row into a new data directory; refuses one in use', async () => {
    const env = (dataDir: string) => ({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PATH: process.env.PATH });
    const io = (env: Record<string, string | undefined>) => {
      const out: string[] = [];
      return {
        out,
        io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: () => true }, env },
      };
    };
    const source = join(dir, 'source');
    const copy = join(dir, 'copy');
    const backup = join(dir, 'backup.tar');
    const run = async (dataDir: string, args: string[], embedded?: EmbeddedServer) => {
      const r = io(env(dataDir));
      return {
        code: await runCli(args, { ...r.io, ...(embedded ? { embedded } : {}) }),
        out: r.out.join(''),
      };
    };
    const before = join(dir, 'before.jsonl');
    // The source's three commands on one server of its data directory (as the CLI's tests share
    // one: cli-run.ts), where each would start its own.
    const server = await startEmbeddedServer({ dataDir: join(source, 'pglite') });
    try {
      expect((await run(source, ['import', '--in', original], server)).code).toBe(0); // a database to back up
      expect((await run(source, ['export', '--out', before], server)).code).toBe(0);
      expect((await run(source, ['backup', '--out', backup], server)).code).toBe(0);
    } finally {
      await server.stop();
    }
    expect((await run(copy, ['restore', '--in', backup])).code).toBe(0);
    const again = await run(copy, ['restore', '--in', backup]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.out)).toMatchObject({ code: 'data_dir_in_use' });
    const after = join(dir, 'after.jsonl');
    expect((await run(copy, ['export', '--out', after])).code).toBe(0);
    const [x, y] = [tables(before), tables(after)];
    expect([...y.keys()]).toEqual([...x.keys()]);
    for (const [name, rows] of x) expect({ name, rows: y.get(name) }).toEqual({ name, rows });
  }, 180_000);
});
