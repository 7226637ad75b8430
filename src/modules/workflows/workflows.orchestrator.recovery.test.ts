// The orchestrator when things go wrong or go without a model: offline drafts, a run that survives
// a restart of its worker without a duplicate artifact or model call, and a claim rolled back
// after its call began (the relay and app: workflows.orchestrator.fixtures.ts).
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createRestartableApp, createTestApp, createUser, eventually } from '../../../test/harness.js';
import {
  artifactsOf,
  c,
  creator,
  events,
  fake,
  finished,
  orchestrate,
  relay,
  relayEnv,
  t,
  tasksOf,
  useOrchestratorApp,
} from './workflows.orchestrator.fixtures.js';

useOrchestratorApp();

describe('offline', () => {
  it('seeds the three fixed tasks and writes offline drafts', async () => {
    const off = await createTestApp();
    try {
      const u = await createUser(off, 'public');
      const r0 = await off.api('POST', '/api/protocol/instances', {
        token: u.accessToken,
        body: { machineId: 'triage_flow_v1' },
      });
      const r = await off.api('POST', `/api/protocol/instances/${r0.body.id}/orchestrate`, {
        token: u.accessToken,
        body: {},
      });
      expect(r.status, r.text).toBe(202);
      const run = await eventually(async () => {
        const x = await off.api('GET', `/api/protocol/runs/${r.body.id}`, { token: u.accessToken });
        expect(x.body.status).toBe('completed');
        return x.body;
      });
      expect(run.progress).toEqual({ total: 3, completed: 3, failed: 0 });
      const tasks = (
        await off.api('GET', `/api/protocol/instances/${r0.body.id}/tasks`, { token: u.accessToken })
      ).body.tasks;
      expect(tasks.map((x: any) => x.specialty)).toEqual(['docs', 'code', 'tests']);
      const arts = (
        await off.api('GET', `/api/protocol/instances/${r0.body.id}/artifacts`, { token: u.accessToken })
      ).body.artifacts;
      const one = await off.api('GET', `/api/protocol/artifacts/${arts[0].id}`, { token: u.accessToken });
      expect(one.body).toMatchObject({ status: 'ready' });
      expect(one.body.content).toContain('Offline draft');
    } finally {
      await off.close();
    }
  });
});

describe('restart', () => {
  // Two starts of the service (the first loads a migrated tarball) and waits of up to 60 s
  // inside: the failsafe covers them on a busy machine; nothing is timed.
  it(
    'a run interrupted by its worker stopping resumes on the next one: no duplicate artifact or call',
    { timeout: 120_000 },
    async () => {
      const apps = await createRestartableApp(relayEnv(fake, relay));
      const first = apps.first;
      try {
        const u = await createUser(first, 'public');
        const i = (
          await first.api('POST', '/api/protocol/instances', {
            token: u.accessToken,
            body: {
              machineId: 'documentation_flow_v1',
              context: { tasks: [{ title: 'Restart one' }, { title: 'Restart two' }] },
            },
          })
        ).body;
        relay.state.hold = /Task: Restart two/;
        const r = await first.api('POST', `/api/protocol/instances/${i.id}/orchestrate`, {
          token: u.accessToken,
          body: { concurrency: 1 },
        });
        expect(r.status, r.text).toBe(202);
        // The first task is done and the second one's call is in flight when the worker stops.
        await eventually(() => relay.calls(/Task: Restart two/) === 1, { timeoutMs: 30_000 });
        // The second task's claim (its draft artifact) commits beside its call: wait for it too.
        const artsBefore = await eventually(async () => {
          const listed = (
            await first.api('GET', `/api/protocol/instances/${i.id}/artifacts`, { token: u.accessToken })
          ).body.artifacts;
          expect(listed.map((a: any) => a.status)).toEqual(['ready', 'draft']);
          return listed;
        });
        const api = await apps.restart(() => relay.release());
        const run = await eventually(
          async () => {
            const x = await api.api('GET', `/api/protocol/runs/${r.body.id}`, { token: u.accessToken });
            expect(x.body.status).toBe('completed');
            return x.body;
          },
          { timeoutMs: 60_000 },
        );
        expect(run.progress).toEqual({ total: 2, completed: 2, failed: 0 });
        const arts = (
          await api.api('GET', `/api/protocol/instances/${i.id}/artifacts`, { token: u.accessToken })
        ).body.artifacts;
        // The same two artifacts: the interrupted one finished, none added.
        expect(arts.map((a: any) => [a.id, a.status])).toEqual(artsBefore.map((a: any) => [a.id, 'ready']));
        expect(relay.calls(/Task: Restart one/)).toBe(1);
        expect(relay.calls(/Task: Restart two/)).toBe(2);
        const tasks = (
          await api.api('GET', `/api/protocol/instances/${i.id}/tasks`, { token: u.accessToken })
        ).body.tasks;
        expect(tasks.map((x: any) => [x.status, x.runCount])).toEqual([
          ['completed', 1],
          ['completed', 1],
        ]);
        // Driving the job again changes nothing: the run is over.
        await api.deps.jobs.enqueue(api.deps.db, 'workflows.run', { runId: r.body.id });
        await api.deps.jobs.drain(30_000);
        expect(
          (await api.api('GET', `/api/protocol/instances/${i.id}/artifacts`, { token: u.accessToken })).body
            .artifacts,
        ).toHaveLength(2);
      } finally {
        relay.release();
        await apps.close();
      }
    },
  );
});

describe('a claim rolled back', () => {
  it('aborts the call it started; the retried job claims the task again and it ends with one artifact', async () => {
    // A fault in the database: the first insert of this task's "started" event fails, after the
    // claim's own statement and its call's start, before the commit (the seeding's transaction).
    await sql`create sequence rollback_once`.execute(t.deps.db);
    await sql`
      create function fail_first_claim() returns trigger language plpgsql as $$
      begin
        if new.event_text like 'Task "Rollback me" started%' and nextval('rollback_once') = 1 then
          raise exception 'injected fault';
        end if;
        return new;
      end $$`.execute(t.deps.db);
    await sql`create trigger fail_first_claim before insert on timeline_events
      for each row execute function fail_first_claim()`.execute(t.deps.db);
    try {
      relay.state.hold = /Task: Rollback me/;
      const i = await c.create(creator, {
        machineId: 'documentation_flow_v1',
        context: { tasks: [{ title: 'Rollback me' }] },
      });
      const r = await orchestrate(creator, i.id, { concurrency: 1 });
      expect(r.status, r.text).toBe(202);
      // The retried job's claim committed (the first one's was rolled back): its call is held.
      await eventually(
        async () => {
          const claims = await t.deps.db
            .selectFrom('workflow_task_runs')
            .select('task_id')
            .where('run_id', '=', r.body.id)
            .execute();
          expect(claims).toHaveLength(1);
        },
        { timeoutMs: 30_000 },
      );
      relay.release();
      const run = await finished(creator, r.body.id);
      expect(run).toMatchObject({ status: 'completed', progress: { total: 1, completed: 1, failed: 0 } });
      // The first call was given up when its claim rolled back (held, it was never answered); the
      // second one made the artifact.
      expect(relay.answered(/Task: Rollback me/)).toBe(1);
      const artifacts = await artifactsOf(i.id);
      expect(artifacts.map((a: any) => a.status)).toEqual(['ready']);
      const tasks = await tasksOf(i.id);
      expect(tasks.map((x: any) => [x.title, x.status, x.runCount])).toEqual([
        ['Rollback me', 'completed', 1],
      ]);
      const timeline = await events(i.id);
      expect(timeline.filter((e) => e.eventType === 'workflow_task_completed')).toHaveLength(1);
    } finally {
      relay.release();
      await sql`drop trigger fail_first_claim on timeline_events`.execute(t.deps.db);
      await sql`drop function fail_first_claim()`.execute(t.deps.db);
    }
  });
});
