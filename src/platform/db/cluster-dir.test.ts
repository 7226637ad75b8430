// A data directory's cluster laid down whole or not at all, and the directories an older version
// left unfinished (killed while PGlite loaded the empty cluster straight into them): made again
// when they hold no data, with a line saying so; refused, left as they are, when they do.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../../../test/harness.js';
import { findCached } from '../machine-cache.js';
import { ClusterUnusableError } from './cluster-dir.js';
import { extractTar, readTar, type TarEntry } from './cluster-tar.js';
import { emptyClusterPlaces } from './empty-cluster.js';
import { startEmbeddedServer, type EmbeddedServer } from './pglite-server.js';

describe.skipIf(isPostgres())('a data directory’s cluster', { timeout: 120_000 }, () => {
  let dir: string;
  let entries: TarEntry[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cluster-dir-test-'));
    // The machine's empty cluster (made now if this machine has none yet).
    if (!findCached(emptyClusterPlaces())) await (await startEmbeddedServer({ dataDir: null })).stop();
    entries = readTar(readFileSync(findCached(emptyClusterPlaces())!));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const query = async (s: EmbeddedServer, text: string) => {
    const c = new pg.Client({ host: s.socketDir, port: s.port, user: 'postgres', database: 'postgres' });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  /** A data directory as an older version left it: part of the empty cluster, its lock inside. */
  const unfinished = async (name: string, count: number) => {
    const dataDir = join(dir, name, 'pglite');
    mkdirSync(dataDir, { recursive: true });
    await extractTar(entries.slice(0, count), dataDir, () => false);
    writeFileSync(join(dataDir, 'server.lock'), '1');
    return dataDir;
  };

  it('holds no lock of its own and none from the tarball; an unfinished one is made again, said in a line', async () => {
    expect(entries.map((e) => e.name)).not.toContain('server.lock');
    const dataDir = await unfinished('half', Math.floor(entries.length / 2));
    const lines: string[] = [];
    const s = await startEmbeddedServer({ dataDir, log: (l) => lines.push(l) });
    try {
      expect(lines).toEqual([
        `the embedded database in ${dataDir} holds no data and a first start was interrupted while it was being made: it is made again`,
      ]);
      await query(s, 'create table kept (id int)');
      expect(await query(s, 'select count(*)::int as n from kept')).toEqual([{ n: 0 }]);
      expect(existsSync(join(dataDir, 'server.lock'))).toBe(false);
    } finally {
      await s.stop();
    }
  });

  it('one PGlite cannot open: made again if it holds no data, refused in one line if it does', async () => {
    // Every file there, the control file cut short (as a kill in its write leaves it).
    const broken = await unfinished('broken', entries.length);
    truncateSync(join(broken, 'global', 'pg_control'), 100);
    const lines: string[] = [];
    const s = await startEmbeddedServer({ dataDir: broken, log: (l) => lines.push(l) });
    await s.stop();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/holds no data and PGlite could not open it: .+: it is made again$/);

    // The same with a file that is not the empty cluster's (a table's): its data stays.
    const kept = await unfinished('kept', entries.length);
    writeFileSync(join(kept, 'base', '5', '99999'), 'a table');
    truncateSync(join(kept, 'global', 'pg_control'), 100);
    const err = await startEmbeddedServer({ dataDir: kept, log: () => undefined }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnusableError);
    expect((err as Error).message).toMatch(
      /cannot be opened \(PGlite could not open it: .+\) and holds data/,
    );
    expect((err as Error).message).not.toMatch(/\n/);
    expect(readFileSync(join(kept, 'base', '5', '99999'), 'utf8')).toBe('a table');
  });
});
