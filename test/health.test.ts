// GET /api/health for load balancers: 503 with `degraded` while migrations are pending (both
// databases: this node's code expects a table the database lacks) and while the database does not
// answer (PostgreSQL, through a TCP proxy the test cuts: the embedded database runs inside the
// process and cannot become unreachable while the process answers), and 200 `ok` again once it
// recovers. The background probe runs every 2 s; the test calls it rather than waiting for it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, isPostgres, type TestApp } from './harness.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

async function health(t: TestApp) {
  await t.deps.health.probe();
  return t.api('GET', '/api/health');
}

describe('GET /api/health when something fails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('503 degraded while a migration is pending, 200 ok once it is applied', async () => {
    const ok = await health(t);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'ok', database: { ok: true, migrations: { pending: 0 } } });
    const latest = ok.body.database.migrations.latest as string;

    // A node whose code has a migration the database has not applied (as in a rolling upgrade).
    await sql`delete from schema_migrations where name = ${latest}`.execute(t.deps.db);
    const pending = await health(t);
    expect(pending.status).toBe(503);
    expect(pending.body).toMatchObject({
      status: 'degraded',
      database: { ok: true, migrations: { pending: 1 } },
    });

    await sql`insert into schema_migrations (name) values (${latest})`.execute(t.deps.db);
    const back = await health(t);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: 'ok', database: { migrations: { pending: 0, latest } } });
  });
});

describe.runIf(isPostgres())('GET /api/health when PostgreSQL goes away', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  beforeAll(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    t = await createTestApp({ DATABASE_URL: url.toString(), DB_POOL_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    proxy.restore();
    await t.close();
    await proxy.close();
  });

  it('503 degraded while the database does not answer, 200 ok when it is back', async () => {
    expect((await health(t)).status).toBe(200);

    proxy.cut();
    const down = await health(t);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'degraded', database: { ok: false } });

    proxy.restore();
    const back = await health(t);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: 'ok', database: { ok: true } });
  });
});
