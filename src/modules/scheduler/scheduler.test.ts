// Scheduled tasks on the real server and pg-boss's scheduler (contract: "Admin zones"): CRUD and
// validation, a schedule created, fired, disabled and deleted, run-now of each kind with its last
// run, and two nodes on one PostgreSQL filing one job per occurrence. The scheduler passes every
// second here (SCHEDULER_INTERVAL=1); `* * * * *` is due at once (its minute started less than a
// minute ago), so a new task fires at the next pass: the tests wait for that signal.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, isPostgres, type TestApp, type TestUser } from '../../../test/harness.js';
import { eventually } from '../../../test/eventually.js';
import { fixtures } from '../../../test/observer-fixtures.js';
import { TASK_JOB } from './index.js';

let t: TestApp;
let admin: TestUser;
let observerId: number;

beforeAll(async () => {
  t = await createTestApp({ SCHEDULER_INTERVAL: '1' });
  admin = await createUser(t, 'cso');
  const o = await t.api('POST', '/api/admin/instances', {
    token: admin.accessToken,
    body: { name: 'Scheduled observer', level: 8, source: 'portal' },
  });
  observerId = o.body.id;
});
afterAll(() => t.close());

const base = '/api/admin/scheduled-tasks';
const call = (method: string, path: string, body?: unknown, token = admin.accessToken) =>
  t.api(method, `${base}${path}`, { token, body });
const task = async (id: string) => (await call('GET', `/${id}`)).body;
const finished = (id: string, jobId?: string) =>
  eventually(
    async () => {
      const v = await task(id);
      if (!v.lastRun || !['completed', 'failed'].includes(v.lastRun.state)) return false;
      if (jobId && v.lastRun.jobId !== jobId) return false;
      return v;
    },
    { timeoutMs: 30_000 },
  );

describe('scheduled tasks', () => {
  it('validates kind, cron, time zone and payload (an unknown observer too), all at once; refuses non-admins', async () => {
    const list = await call('GET', '');
    expect(list.status).toBe(200);
    expect(list.body.kinds).toEqual(['observer_cycle', 'diary_compliance', 'maintenance_sweep']);
    const cases: [Record<string, unknown>, string[]][] = [
      [{ name: 'x', kind: 'nope', cron: '* * * * *' }, ['kind']],
      [{ name: 'x', kind: 'maintenance_sweep', cron: '* * * *' }, ['cron']],
      [{ name: 'x', kind: 'maintenance_sweep', cron: '61 * * * *' }, ['cron']],
      [{ name: 'x', kind: 'maintenance_sweep', cron: '@hourly' }, ['cron']],
      [{ name: 'x', kind: 'maintenance_sweep', cron: '* * * * *', timezone: 'Mars/Olympus' }, ['timezone']],
      [{ name: 'x', kind: 'maintenance_sweep', cron: '* * * * *', payload: { a: 1 } }, ['payload']],
      [{ name: 'x', kind: 'observer_cycle', cron: '* * * * *', payload: {} }, ['payload.observerId']],
      [
        { name: 'x', kind: 'observer_cycle', cron: '* * * * *', payload: { observerId: 99999999 } },
        ['payload.observerId'],
      ],
      [
        {
          name: 'x',
          kind: 'diary_compliance',
          cron: '0 * * *',
          timezone: 'CET',
          payload: { observerId, hours: 0 },
        },
        ['cron', 'timezone', 'payload.hours'],
      ],
      [{ kind: 'maintenance_sweep', cron: '* * * * *' }, ['name']],
    ];
    for (const [body, paths] of cases) {
      const r = await call('POST', '', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      for (const p of paths) expect(JSON.stringify(r.body.errors), JSON.stringify(body)).toContain(p);
    }
    const plain = await createUser(t, 'public');
    expect((await call('GET', '', undefined, plain.accessToken)).status).toBe(403);
    expect((await call('POST', '', { name: 'x' }, plain.accessToken)).status).toBe(403);
    expect((await t.api('GET', base)).status).toBe(401);
    expect((await call('GET', '/not-a-uuid')).status).toBe(400);
    expect((await call('GET', '/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('POST', '/00000000-0000-4000-8000-000000000000/run')).status).toBe(404);
  });

  it('a schedule is created, fires, is disabled and deleted (its pg-boss schedule with it)', async () => {
    const before = Date.now();
    const created = await call('POST', '', {
      name: 'sweep every minute',
      kind: 'maintenance_sweep',
      cron: '* * * * *',
      timezone: 'Europe/Paris',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    expect(created.body).toMatchObject({
      enabled: true,
      timezone: 'Europe/Paris',
      payload: {},
      lastRun: null,
    });
    // Every minute: the next run is the first whole minute after it was made.
    const nextRunAt = Date.parse(created.body.nextRunAt);
    expect(nextRunAt % 60_000).toBe(0);
    expect(nextRunAt).toBeGreaterThan(before);
    expect(nextRunAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect((await t.deps.jobs.schedules(TASK_JOB)).map((s) => s.key)).toContain(id);

    const fired = await finished(id);
    expect(fired.lastRun).toMatchObject({ state: 'completed', error: null });
    expect(fired.lastRun.startedAt).not.toBeNull();

    const off = await call('PATCH', `/${id}`, { enabled: false, name: 'sweep (paused)' });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, nextRunAt: null, name: 'sweep (paused)' });
    expect((await t.deps.jobs.schedules(TASK_JOB)).map((s) => s.key)).not.toContain(id);
    expect((await call('PATCH', `/${id}`, { kind: 'observer_cycle' })).status).toBe(400);
    expect((await call('PATCH', `/${id}`, { cron: 'nope' })).status).toBe(400);

    const on = await call('PATCH', `/${id}`, { enabled: true, cron: '30 4 * * 1' });
    expect(on.body.nextRunAt).not.toBeNull();
    expect((await t.deps.jobs.schedules(TASK_JOB)).find((s) => s.key === id)).toMatchObject({
      cron: '30 4 * * 1',
      timezone: 'Europe/Paris',
    });
    expect((await call('DELETE', `/${id}`)).status).toBe(204);
    expect((await call('GET', `/${id}`)).status).toBe(404);
    expect((await t.deps.jobs.schedules(TASK_JOB)).map((s) => s.key)).not.toContain(id);
    expect((await call('DELETE', `/${id}`)).status).toBe(404);
  });

  it('changes a task whose payload names an observer (the check reads the registry)', async () => {
    const created = await call('POST', '', {
      name: 'nightly diaries',
      kind: 'diary_compliance',
      cron: '30 2 * * *',
      payload: { observerId },
    });
    expect(created.status).toBe(201);
    const off = await call('PATCH', `/${created.body.id}`, { enabled: false });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, nextRunAt: null, payload: { observerId } });
    const moved = await call('PATCH', `/${created.body.id}`, { payload: { observerId, hours: 12 } });
    expect(moved.body).toMatchObject({
      enabled: false,
      cron: '30 2 * * *',
      payload: { observerId, hours: 12 },
    });
    const unknown = await call('PATCH', `/${created.body.id}`, { payload: { observerId: 999_999 } });
    expect(unknown.status).toBe(400);
    expect((await call('DELETE', `/${created.body.id}`)).status).toBe(204);
  });

  it('runs now, enabled or not: each kind, its last run, a failure with its error', async () => {
    // Two Level-5 instances under the observer, one with a diary entry in the window.
    const f = fixtures(t, () => admin);
    const diarist = await f.instance({
      name: 'Diarist',
      level: 5,
      source: 'game_client',
      parentInstanceId: observerId,
    });
    await f.instance({ name: 'Silent', level: 5, source: 'game_client', parentInstanceId: observerId });
    await f.record({ eventType: 'diary_entry', eventText: 'today', instanceId: diarist.id });
    const compliance = await call('POST', '', {
      name: 'diaries',
      kind: 'diary_compliance',
      cron: '0 6 * * *',
      payload: { observerId, hours: 48 },
      enabled: false,
    });
    expect(compliance.status).toBe(201);
    const run = await call('POST', `/${compliance.body.id}/run`);
    expect(run.status).toBe(202);
    expect(run.body.taskId).toBe(compliance.body.id);
    const done = await finished(compliance.body.id, run.body.jobId);
    expect(done.lastRun).toMatchObject({ jobId: run.body.jobId, state: 'completed' });
    const checked = await sql<{ metadata: any }>`select metadata from timeline_events
      where event_type = 'diary_compliance_checked' and instance_id = ${observerId}`.execute(t.deps.db);
    expect(checked.rows).toHaveLength(1);
    expect(checked.rows[0]!.metadata).toMatchObject({ compliant: false, missingCount: 1, windowHours: 48 });

    const cycle = await call('POST', '', {
      name: 'cycle',
      kind: 'observer_cycle',
      cron: '0 * * * *',
      payload: { observerId, hours: 24, limit: 10 },
    });
    const summary = () =>
      t.api('GET', `/api/observer/observer/${observerId}/summary`, { token: admin.accessToken });
    const cyclesBefore = ((await summary()).body.metaState?.cycles as number | undefined) ?? 0;
    const cycleRun = await call('POST', `/${cycle.body.id}/run`);
    expect((await finished(cycle.body.id, cycleRun.body.jobId)).lastRun.state).toBe('completed');
    expect((await summary()).body.metaState.cycles).toBe(cyclesBefore + 1);

    // A run that fails (its observer gone from the payload behind the API's back) reports why.
    await sql`update scheduled_tasks set payload = '{"observerId": 99999999}' where id = ${cycle.body.id}`.execute(
      t.deps.db,
    );
    const failing = await call('POST', `/${cycle.body.id}/run`);
    const failed = await finished(cycle.body.id, failing.body.jobId);
    expect(failed.lastRun).toMatchObject({ state: 'failed' });
    expect(failed.lastRun.error).toMatch(/observer/i);
    await call('DELETE', `/${cycle.body.id}`);
    await call('DELETE', `/${compliance.body.id}`);
  });

  // PostgreSQL only: two nodes need a database both can open, and the embedded one serves one
  // process (there a single node files every occurrence, which the tests above cover).
  it.runIf(isPostgres())('two nodes on one database: one job per occurrence', async () => {
    const t2 = await createTestApp({ SCHEDULER_INTERVAL: '1' }, { sameDatabaseAs: t });
    try {
      const created = await call('POST', '', {
        name: 'both nodes',
        kind: 'maintenance_sweep',
        cron: '* * * * *',
      });
      const id = created.body.id;
      await finished(id);
      const boss = `${t.schema}_boss`;
      // Several passes after the first firing, whichever node makes them.
      const passes = new Set<string>();
      await eventually(
        async () => {
          const r = await sql<{ cron_on: Date }>`select cron_on from ${sql.table(`${boss}.version`)}`.execute(
            t.deps.db,
          );
          passes.add(r.rows[0]!.cron_on.toISOString());
          return passes.size >= 4;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      await t.deps.jobs.drain(30_000);
      await call('PATCH', `/${id}`, { enabled: false });
      const forwarded = await sql<{ slot: string; n: number }>`
        select data->>'slot' as slot, count(*)::int as n from ${sql.table(`${boss}.job`)}
        where name = '__pgboss__send-it' and data->>'key' = ${id} group by 1`.execute(t.deps.db);
      const runs = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.table(`${boss}.job`)}
        where name = ${TASK_JOB} and data->>'taskId' = ${id}`.execute(t.deps.db);
      expect(forwarded.rows.length).toBeGreaterThanOrEqual(1);
      for (const r of forwarded.rows) expect(r.n).toBe(1);
      expect(runs.rows[0]!.n).toBe(forwarded.rows.length);
    } finally {
      await t2.close();
    }
  });
});
