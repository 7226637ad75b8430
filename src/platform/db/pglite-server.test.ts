// The embedded server's reset (what the test harness reuses its servers with): the data goes back
// to the tarball's, the clients of before are cut off, and a server not loaded from a tarball
// refuses it. And a new cluster: made once by initdb and kept, then loaded from what was kept.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../../../test/harness.js';
import { startEmbeddedServer, type EmbeddedServer } from './pglite-server.js';

describe.skipIf(isPostgres())('embedded server reset', () => {
  let dir: string;
  let tarball: string;
  let server: EmbeddedServer;
  /** Started empty: it made the tarball. */
  let maker: EmbeddedServer;
  const client = async () => {
    const c = new pg.Client({
      host: server.socketDir,
      port: server.port,
      user: 'postgres',
      database: 'postgres',
    });
    await c.connect();
    return c;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pglite-server-test-'));
    tarball = join(dir, 'template.tar');
    maker = await startEmbeddedServer({ dataDir: null });
    const c = new pg.Client({
      host: maker.socketDir,
      port: maker.port,
      user: 'postgres',
      database: 'postgres',
    });
    await c.connect();
    await c.query(
      "create table kept (id int primary key, note text); insert into kept values (1, 'template')",
    );
    await c.end();
    await maker.dumpTo(tarball);
    server = await startEmbeddedServer({ dataDir: null, loadFrom: tarball });
  });
  afterAll(async () => {
    await Promise.all([server.stop(), maker.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('brings back the tarball’s data and cuts off the clients of before', async () => {
    const before = await client();
    await before.query("insert into kept values (2, 'written'); create table extra (id int)");
    const ended = new Promise<void>((resolve) => before.once('end', resolve));
    before.on('error', () => undefined);
    await server.reset();
    await ended;
    const after = await client();
    expect((await after.query('select id, note from kept order by id')).rows).toEqual([
      { id: 1, note: 'template' },
    ]);
    await expect(after.query('select * from extra')).rejects.toMatchObject({ code: '42P01' });
    // Twice in a row: each reset starts again from the tarball.
    await after.query("insert into kept values (3, 'again')");
    await after.end();
    await server.reset();
    const third = await client();
    expect((await third.query('select count(*)::int as n from kept')).rows).toEqual([{ n: 1 }]);
    await third.end();
  });

  it('is refused by a server that was not loaded from a tarball', async () => {
    await expect(maker.reset()).rejects.toThrow(/only a database loaded from a tarball can be reset/);
  });

  it('says it is gone once stopped, and its socket is gone with it', async () => {
    const other = await startEmbeddedServer({ dataDir: null, loadFrom: tarball });
    expect(other.gone()).toBeNull();
    await other.stop();
    expect(other.gone()).toBe('stopped');
    expect(existsSync(join(other.socketDir, `.s.PGSQL.${other.port}`))).toBe(false);
  });
});

// initdb runs once here (seconds on a busy machine): a generous failsafe, not a timing claim.
describe.skipIf(isPostgres())('a new embedded cluster', { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pglite-cluster-test-'));
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

  it('is made by initdb and kept once, then started from what was kept; a cluster on disk stays its own', async () => {
    const kept = join(dir, 'empty.tar');
    const made = await startEmbeddedServer({ dataDir: null, emptyClusterPlaces: [kept] });
    // Kept before the server answered: nothing written after the start is in it.
    expect(existsSync(kept)).toBe(true);
    await query(made, 'create table marker (id int)');
    // A cluster with a marker stands in for the kept one: a new cluster is loaded from it.
    const marked = join(dir, 'marked.tar');
    await made.dumpTo(marked);
    await made.stop();
    copyFileSync(marked, kept);
    const loaded = await startEmbeddedServer({ dataDir: null, emptyClusterPlaces: [kept] });
    expect(await query(loaded, 'select count(*)::int as n from marker')).toEqual([{ n: 0 }]);
    await loaded.stop();

    // A data directory: its new cluster comes from the kept one, then it is its own.
    const dataDir = join(dir, 'data');
    const first = await startEmbeddedServer({ dataDir, emptyClusterPlaces: [kept] });
    await query(first, 'drop table marker; create table mine (id int)');
    await first.stop();
    const again = await startEmbeddedServer({ dataDir, emptyClusterPlaces: [kept] });
    expect(
      await query(
        again,
        "select to_regclass('mine') is not null as mine, to_regclass('marker') is null as no_marker",
      ),
    ).toEqual([{ mine: true, no_marker: true }]);
    await again.stop();
  });
});
