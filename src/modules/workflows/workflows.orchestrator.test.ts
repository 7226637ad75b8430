// The orchestrator on a real server and database, its model calls going to the fake model server
// through a local HTTP relay that counts the calls in flight, can hold a task's calls until the
// test lets them go, and refuses the calls of a task marked to fail (contract "Tasks, artifacts,
// orchestrator"): tasks seeded by one structured call or from the context, assigned by specialty,
// one artifact each, a failing task blocked, concurrency honoured, one active run, runs started on
// entering execution and by a rerun, offline drafts, access, a run that survives a restart of its
// worker without a duplicate artifact or model call, and a claim rolled back after its call began.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import {
  createRestartableApp,
  createTestApp,
  createUser,
  eventually,
  isPostgres,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { client, expectProblem } from './workflows.fixtures.js';

const TASK_MARK = 'Write the artifact this task asks for';

/** A relay in front of the fake model server: counts task calls in flight (and the most at once),
 * holds task calls whose prompt matches `hold` until `release()`, answers 400 to those whose
 * prompt holds `failMark`, and keeps the prompts of the task calls it answered (a call its client
 * gave up on first is not answered). */
async function startRelay(target: string) {
  const state = {
    inFlight: 0,
    maxInFlight: 0,
    taskCalls: [] as string[],
    answered: [] as string[],
    hold: null as RegExp | null,
    failMark: 'FAIL-ME',
    waiting: [] as (() => void)[],
  };
  const read = (req: IncomingMessage) =>
    new Promise<string>((ok) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    });
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const prompt = (JSON.parse(body).messages ?? []).map((m: any) => String(m.content)).join('\n');
      const isTask = prompt.includes(TASK_MARK);
      if (isTask) {
        state.taskCalls.push(prompt);
        state.inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      }
      let gone = false;
      res.on('close', () => {
        if (isTask && !gone) state.inFlight--;
        gone = true;
      });
      try {
        while (isTask && state.hold?.test(prompt)) await new Promise<void>((ok) => state.waiting.push(ok));
        if (res.destroyed) return;
        if (isTask && prompt.includes(state.failMark)) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'refused by the relay' } }));
          return;
        }
        const upstream = await fetch(target + (req.url ?? ''), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
          body,
        });
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'application/json',
        });
        const answer = Buffer.from(await upstream.arrayBuffer());
        if (res.destroyed) return;
        res.end(answer);
        if (isTask) state.answered.push(prompt);
      } catch {
        res.destroy();
      }
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    url: origin,
    release() {
      state.hold = null;
      for (const w of state.waiting.splice(0)) w();
    },
    calls: (re: RegExp) => state.taskCalls.filter((p) => re.test(p)).length,
    answered: (re: RegExp) => state.answered.filter((p) => re.test(p)).length,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
type Relay = Awaited<ReturnType<typeof startRelay>>;

/** The fake's origin (its url ends in /v1; the relay forwards the path it is asked). */
const originOf = (fake: FakeModelServer) => fake.url.replace(/\/v1$/, '');
const relayEnv = (fake: FakeModelServer, relay: Relay, extra: Record<string, string> = {}) =>
  fake.env({ MODEL_BASE_URL: `${relay.url}/v1`, MODEL_MAX_RETRIES: '0', ...extra });

let fake: FakeModelServer;
let relay: Relay;
let t: TestApp;
let admin: TestUser;
let creator: TestUser;
let stranger: TestUser;
let c: ReturnType<typeof client>;
const npcs: Record<string, number> = {};

beforeAll(async () => {
  fake = await startFakeModelServer();
  relay = await startRelay(originOf(fake));
  t = await createTestApp(relayEnv(fake, relay));
  admin = await createUser(t, 'cso');
  creator = await createUser(t, 'public');
  stranger = await createUser(t, 'public');
  c = client(t);
  // Created in this order, so ids ascend: coderA < coderB < writer.
  for (const [name, specialties] of [
    ['coderA', ['code', 'tests']],
    ['coderB', ['code']],
    ['writer', ['docs']],
  ] as const) {
    const npc = await t.deps.services.characters.createNpc({
      name,
      description: `${name} the specialist`,
      metadata: { specialties: [...specialties] },
    });
    npcs[name] = npc.id;
  }
});
afterAll(async () => {
  relay.release();
  await t.close();
  await relay.close();
  await fake.close();
});

const orchestrate = (user: TestUser, id: string, body?: Record<string, unknown>) =>
  c.call(user, 'POST', `/api/protocol/instances/${id}/orchestrate`, body ?? {});
const runOf = (user: TestUser, runId: string) => c.call(user, 'GET', `/api/protocol/runs/${runId}`);
async function finished(user: TestUser, runId: string, app: TestApp = t) {
  return eventually(
    async () => {
      const r = await app.api('GET', `/api/protocol/runs/${runId}`, { token: user.accessToken });
      expect(r.body.status).toMatch(/completed|failed/);
      return r.body;
    },
    { timeoutMs: 30_000 },
  );
}
const tasksOf = async (id: string, app: TestApp = t) =>
  (await app.api('GET', `/api/protocol/instances/${id}/tasks`, { token: creator.accessToken })).body.tasks;
const artifactsOf = async (id: string, app: TestApp = t) =>
  (await app.api('GET', `/api/protocol/instances/${id}/artifacts`, { token: creator.accessToken })).body
    .artifacts;
const events = async (id: string) =>
  (await c.call(creator, 'GET', `/api/protocol/instances/${id}/timeline?limit=200`)).body.events as any[];

describe('orchestrate', () => {
  it('seeds by one structured call, assigns by specialty, runs 2 at a time, blocks the failing task, one active run', async () => {
    const seeded = [
      { title: 'Document the API', specialty: 'docs' },
      { title: 'Build the endpoint', specialty: 'code' },
      { title: 'Build the client FAIL-ME', specialty: 'code' },
      { title: 'Test the endpoint', specialty: 'tests' },
      { title: 'Draw the screens', specialty: 'design' },
    ];
    fake.replyChat({
      text: `Here you go: ${JSON.stringify({ tasks: seeded })}`,
      when: (b) => JSON.stringify(b.messages).includes('break a piece of work into tasks'),
    });
    const i = await c.create(creator, {
      machineId: 'documentation_flow_v1',
      context: { title: 'Orders API', goal: 'Ship the orders endpoint' },
    });
    relay.state.maxInFlight = 0;
    relay.state.hold = /./;
    const r = await orchestrate(creator, i.id, { concurrency: 2 });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({
      instanceId: i.id,
      status: 'queued',
      trigger: 'manual',
      taskIds: [],
      progress: { total: 0, completed: 0, failed: 0 },
      error: null,
      finishedAt: null,
    });
    // Two task calls are held in flight; a second run is refused meanwhile.
    await eventually(() => relay.state.inFlight === 2, { timeoutMs: 30_000 });
    const second = expectProblem(await orchestrate(creator, i.id), 409, 'conflict');
    expect(second.run).toMatchObject({ id: r.body.id });
    expect((await c.get(creator, i.id)).body.activeRunId).toBe(r.body.id);
    expect((await runOf(creator, r.body.id)).body.status).toBe('running');
    relay.release();

    const run = await finished(creator, r.body.id);
    expect(relay.state.maxInFlight).toBe(2);
    expect(run).toMatchObject({ status: 'completed', progress: { total: 5, completed: 4, failed: 1 } });
    expect(run.taskIds).toHaveLength(5);
    const tasks = await tasksOf(i.id);
    expect(tasks.map((x: any) => [x.title, x.specialty, x.assignedPersonaId, x.status, x.runCount])).toEqual([
      ['Document the API', 'docs', npcs.writer, 'completed', 1],
      ['Build the endpoint', 'code', npcs.coderA, 'completed', 1],
      // Fewest tasks here: coderA has one by now.
      ['Build the client FAIL-ME', 'code', npcs.coderB, 'blocked', 1],
      ['Test the endpoint', 'tests', npcs.coderA, 'completed', 1],
      // No NPC has the specialty: the assistant's own user.
      ['Draw the screens', 'design', await t.deps.services.characters.assistantUserId(), 'completed', 1],
    ]);
    const artifacts = await artifactsOf(i.id);
    expect(artifacts).toHaveLength(5);
    for (const task of tasks) {
      const mine = artifacts.filter((a: any) => a.taskId === task.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        personaId: task.assignedPersonaId,
        status: task.status === 'blocked' ? 'draft' : 'ready',
        reviewStatus: 'pending',
      });
    }
    // The first two tasks (the concurrency) were claimed together, in the seeding's transaction
    // (one transaction time); each later one on its own, later, when a worker was free.
    const claims = await t.deps.db
      .selectFrom('workflow_task_runs')
      .innerJoin('workflow_tasks', 'workflow_tasks.id', 'workflow_task_runs.task_id')
      .select(['workflow_task_runs.claimed_at', 'workflow_tasks.seq'])
      .where('workflow_task_runs.run_id', '=', run.id)
      .orderBy('workflow_tasks.seq')
      .execute();
    const claimedAt = claims.map((x) => x.claimed_at.getTime());
    expect(claimedAt[0]).toBe(claimedAt[1]);
    for (const later of claimedAt.slice(2)) expect(later).toBeGreaterThan(claimedAt[0]!);
    const ready = artifacts.find((a: any) => a.taskId === tasks[1].id);
    const full = await c.call(creator, 'GET', `/api/protocol/artifacts/${ready.id}`);
    expect(full.body.content).toContain('fake reply to:');
    expect(full.body.content).toContain('Task: Build the endpoint');
    // The task call's system prompt: the creator's routing protocol merged with the workflow's.
    const taskCall = fake
      .chatRequests()
      .find((q) => JSON.stringify(q.body).includes('Task: Build the endpoint'))!;
    const system = taskCall.body.messages.find((m: any) => m.role === 'system').content as string;
    expect(system).toContain('documentation_flow_v1');
    expect(JSON.stringify(taskCall.body.messages)).toContain('You are coderA');
    const timeline = await events(i.id);
    const count = (type: string) => timeline.filter((e) => e.eventType === type).length;
    expect([count('workflow_run_started'), count('workflow_task_completed')]).toEqual([1, 4]);
    expect([count('workflow_task_failed'), count('workflow_run_finished')]).toEqual([1, 1]);
    const failed = timeline.find((e) => e.eventType === 'workflow_task_failed');
    expect(failed.metadata).toMatchObject({
      taskId: tasks[2].id,
      runId: run.id,
      stateMachineInstanceId: i.id,
    });
    expect((await c.get(creator, i.id)).body.activeRunId).toBeNull();
    const list = await c.call(creator, 'GET', `/api/protocol/instances/${i.id}/runs`);
    expect(list.body.runs.map((x: any) => x.id)).toEqual([run.id]);
  });

  it('seeds from context.tasks without a model call; runTasks false assigns only', async () => {
    const seedCalls = () =>
      fake.chatRequests().filter((q) => JSON.stringify(q.body).includes('break a piece of work into tasks'))
        .length;
    const before = seedCalls();
    const i = await c.create(creator, {
      machineId: 'triage_flow_v1',
      context: {
        title: 'Crash',
        tasks: [{ title: 'Write it down', specialty: 'docs' }, { title: 'Fix it' }],
      },
    });
    const r = await orchestrate(creator, i.id, { runTasks: false });
    expect(r.status, r.text).toBe(202);
    const run = await finished(creator, r.body.id);
    expect(run).toMatchObject({
      status: 'completed',
      taskIds: [],
      progress: { total: 0, completed: 0, failed: 0 },
    });
    expect(seedCalls()).toBe(before);
    const tasks = await tasksOf(i.id);
    expect(tasks.map((x: any) => [x.title, x.specialty, x.status, x.assignedPersonaId])).toEqual([
      ['Write it down', 'docs', 'pending', npcs.writer],
      ['Fix it', 'general', 'pending', await t.deps.services.characters.assistantUserId()],
    ]);
    expect(await artifactsOf(i.id)).toEqual([]);
  });

  it('starts a run on entering execution, and a rerun runs its task alone', async () => {
    const i = await c.create(creator, {
      machineId: 'documentation_flow_v1',
      context: { tasks: [{ title: 'Write the guide', specialty: 'docs' }] },
    });
    await c.transition(creator, i.id, 'triage');
    const exec = await c.approve(admin, i.id);
    expect(exec.body.instance.state).toBe('execution');
    const runId = exec.body.instance.activeRunId;
    expect(runId).not.toBeNull();
    const run = await finished(creator, runId);
    expect(run).toMatchObject({
      trigger: 'state_entry',
      status: 'completed',
      progress: { total: 1, completed: 1 },
    });
    const [task] = await tasksOf(i.id);
    const rerun = await c.call(creator, 'POST', `/api/protocol/tasks/${task.id}/rerun`);
    expect(rerun.status, rerun.text).toBe(202);
    expect(rerun.body).toMatchObject({ trigger: 'rerun', taskIds: [task.id], status: 'queued' });
    expect(await finished(creator, rerun.body.id)).toMatchObject({
      status: 'completed',
      progress: { total: 1, completed: 1, failed: 0 },
    });
    expect((await tasksOf(i.id))[0]).toMatchObject({ status: 'completed', runCount: 2 });
    const artifacts = await artifactsOf(i.id);
    expect(artifacts.map((a: any) => [a.taskId, a.status])).toEqual([
      [task.id, 'ready'],
      [task.id, 'ready'],
    ]);
  });

  // PostgreSQL only: the lock is held by a second session while the run writes, and the embedded
  // database has one connection (a second client waits until the first is done), so no other
  // session can hold a lock there while the run's statements go on.
  it.runIf(isPostgres())(
    "a run's task claims and finishes pass a share lock of the instance that another holds",
    async () => {
      // A task's claim or finish holds the instance's row FOR SHARE, so a sibling task's does not
      // queue behind it; the instance's own writes (its completion, the run's end) still wait.
      const i = await c.create(creator, {
        machineId: 'triage_flow_v1',
        context: {
          title: 'Shared lock',
          tasks: [
            { title: 'One HOLD-SHARE', specialty: 'docs' },
            { title: 'Two HOLD-SHARE', specialty: 'code' },
          ],
        },
      });
      relay.state.hold = /HOLD-SHARE/;
      const r = await orchestrate(creator, i.id, { concurrency: 2 });
      expect(r.status, r.text).toBe(202);
      // Both claims committed: their model calls are held at the relay.
      await eventually(() => relay.calls(/HOLD-SHARE/) === 2, { timeoutMs: 30_000 });
      const holder = await t.deps.database.pool.connect();
      try {
        await holder.query('begin');
        await holder.query('select id from workflow_instances where id = $1 for share', [i.id]);
        relay.release();
        // Both finishes write while the share lock is held.
        await eventually(
          async () => {
            const rows = await t.deps.db
              .selectFrom('workflow_tasks')
              .select('status')
              .where('instance_id', '=', i.id)
              .execute();
            expect(rows.map((x) => x.status)).toEqual(['completed', 'completed']);
          },
          { timeoutMs: 15_000 },
        );
      } finally {
        await holder.query('commit');
        holder.release();
      }
      expect(await finished(creator, r.body.id)).toMatchObject({
        status: 'completed',
        progress: { total: 2, completed: 2, failed: 0 },
      });
    },
  );

  it('access: creator and approver start and read runs; a stranger gets 404', async () => {
    const i = await c.create(creator, {
      machineId: 'triage_flow_v1',
      context: { tasks: [{ title: 'Look' }] },
    });
    expectProblem(await orchestrate(stranger, i.id), 404, 'not_found');
    const r = await orchestrate(admin, i.id, { runTasks: false });
    expect(r.status, r.text).toBe(202);
    await finished(admin, r.body.id);
    expect((await runOf(creator, r.body.id)).status).toBe(200);
    expectProblem(await runOf(stranger, r.body.id), 404, 'not_found');
    expectProblem(await c.call(stranger, 'GET', `/api/protocol/instances/${i.id}/runs`), 404, 'not_found');
    expect((await orchestrate(creator, i.id, { runTasks: false })).status).toBe(202);
    expectProblem(await orchestrate(creator, i.id, { concurrency: 9 }), 400, 'validation_failed');
  });
});

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
  // Two starts of the service (one migrating a database from scratch) and waits of up to 60 s
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
