// The hourly maintenance, on both databases: one schedule per deployment however many worker
// nodes start or restart (two nodes on PostgreSQL; the embedded database has one process), and a
// run that sweeps what its owners no longer need and keeps the rest: refresh tokens expired for
// more than a day (a token expired an hour ago and a live one stay; the live one still refreshes),
// finished webhook deliveries past WEBHOOK_DELIVERY_RETENTION_DAYS (a recent one and an old one
// still pending stay). Age is given by setting the rows' times back, never waited for.
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestApp,
  createUser,
  eventually,
  isPostgres,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { scheduleMaintenance, SWEEP_JOB, SWEEP_SCHEDULE } from './maintenance.jobs.js';

const RETENTION_DAYS = 30;

let t: TestApp;
let admin: TestUser;
let receiver: Server;
let origin: string;
/** Answers the receiver holds back until the test releases them (a delivery in flight). */
const held: ServerResponse[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/hold') held.push(res);
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await createTestApp({
    SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true',
    WEBHOOK_DELIVERY_RETENTION_DAYS: String(RETENTION_DAYS),
  });
  admin = await createUser(t, 'cso');
});
afterAll(async () => {
  for (const res of held.splice(0)) res.writeHead(200).end('ok');
  await t.close();
  receiver.closeAllConnections();
  await new Promise((ok) => receiver.close(ok));
});

const jobTable = () => sql.table(`${t.deps.jobs.schema}.job`);

/** Maintenance jobs waiting for a later time (each would start a run of its own). */
async function waitingSweeps(): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from ${jobTable()}
    where name = ${SWEEP_JOB} and state = 'created' and start_after > now()`.execute(t.deps.db);
  return r.rows[0]!.n;
}

/** Runs the maintenance job once, as the schedule files it, and waits for it to complete. */
async function runMaintenance() {
  const id = await t.deps.jobs.enqueue(t.deps.db, SWEEP_JOB, {});
  await eventually(async () => {
    const r = await sql<{ state: string }>`select state from ${jobTable()} where id = ${id}::uuid`.execute(
      t.deps.db,
    );
    expect(r.rows[0]?.state).toBe('completed');
  });
}

describe('the hourly maintenance', () => {
  it('is one schedule per deployment, however many worker nodes start or restart', async () => {
    const expected = [{ key: SWEEP_SCHEDULE.key, cron: SWEEP_SCHEDULE.cron, timezone: 'UTC' }];
    expect(await t.deps.jobs.schedules(SWEEP_JOB)).toEqual(expected);
    // A restart sets the same schedule again.
    await scheduleMaintenance(t.deps.jobs);
    expect(await t.deps.jobs.schedules(SWEEP_JOB)).toEqual(expected);
    if (isPostgres()) {
      const second = await createTestApp({}, { sameDatabaseAs: t });
      try {
        expect(await t.deps.jobs.schedules(SWEEP_JOB)).toEqual(expected);
      } finally {
        await second.close();
      }
    }
    // Nothing else starts runs of its own: no run waits beside the schedule's.
    expect(await waitingSweeps()).toBe(0);
  });

  it('a run drops refresh tokens expired for over a day and keeps the others', async () => {
    const user = await createUser(t, 'public');
    let newest = '';
    for (let i = 0; i < 2; i++) {
      const r = await t.api('POST', '/api/auth/login', {
        body: { email: user.email, password: user.password },
      });
      expect(r.status).toBe(200);
      newest = r.body.refreshToken as string;
    }
    const ids = (
      await sql<{ id: number }>`select id from refresh_tokens where user_id = ${user.id} order by id`.execute(
        t.deps.db,
      )
    ).rows.map((r) => r.id);
    expect(ids).toHaveLength(3);
    const [longExpired, justExpired, live] = ids as [number, number, number];
    await sql`update refresh_tokens set expires_at = now() - interval '25 hours' where id = ${longExpired}`.execute(
      t.deps.db,
    );
    await sql`update refresh_tokens set expires_at = now() - interval '1 hour' where id = ${justExpired}`.execute(
      t.deps.db,
    );

    await runMaintenance();

    const left = await sql<{ id: number }>`
      select id from refresh_tokens where user_id = ${user.id} order by id`.execute(t.deps.db);
    expect(left.rows.map((r) => r.id)).toEqual([justExpired, live]);
    const refreshed = await t.api('POST', '/api/auth/refresh', { body: { refreshToken: newest } });
    expect(refreshed.status).toBe(200);
  });

  it('a run drops finished webhook deliveries past their retention and keeps the rest', async () => {
    const create = async (path: string) => {
      const r = await t.api('POST', '/api/admin/webhooks', {
        token: admin.accessToken,
        body: { url: origin + path, eventTypes: ['*'] },
      });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const test = async (id: string) => {
      const r = await t.api('POST', `/api/admin/webhooks/${id}/test`, { token: admin.accessToken });
      expect(r.status).toBe(202);
      return r.body.id as string;
    };
    const ok = await create('/ok');
    const hold = await create('/hold');
    const oldDone = await test(ok);
    const recentDone = await test(ok);
    const inFlight = await test(hold);
    const status = async (id: string) =>
      (
        await sql<{ status: string }>`select status from webhook_deliveries where id = ${id}::uuid`.execute(
          t.deps.db,
        )
      ).rows[0]?.status;
    await eventually(async () => {
      expect(await status(oldDone)).toBe('succeeded');
      expect(await status(recentDone)).toBe('succeeded');
      expect(held).toHaveLength(1);
    });
    expect(await status(inFlight)).toBe('pending');
    const age = sql`now() - make_interval(days => ${RETENTION_DAYS + 1})`;
    await sql`update webhook_deliveries set updated_at = ${age}
      where id in (${oldDone}::uuid, ${inFlight}::uuid)`.execute(t.deps.db);

    await runMaintenance();

    expect(await status(oldDone)).toBeUndefined();
    expect(await status(recentDone)).toBe('succeeded');
    expect(await status(inFlight)).toBe('pending');
    // The delivery in flight completes as usual afterwards.
    held.shift()!.writeHead(200).end('ok');
    await eventually(async () => expect(await status(inFlight)).toBe('succeeded'));
  });
});
