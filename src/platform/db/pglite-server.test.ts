// The embedded server's reset (what the test harness reuses its servers with): the data goes back
// to the tarball's, the clients of before are cut off, and a server not loaded from a tarball
// refuses it.
import { mkdtempSync, rmSync } from 'node:fs';
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
});
