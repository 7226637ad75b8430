// The orchestrator on a real server and database (contract "Tasks, artifacts, orchestrator"),
// its model calls going through the relay of workflows.orchestrator.fixtures.ts: tasks seeded by
// one structured call or from the context, assigned by specialty, one artifact each, a failing
// task blocked, concurrency honoured, one active run, runs started on entering execution and by a
// rerun, the instance's share lock, and access. Offline, restart and rollback:
// workflows.orchestrator.recovery.test.ts.
import { describe, expect, it } from 'vitest';
import { eventually, isPostgres } from '../../../test/harness.js';
import { expectProblem } from './workflows.fixtures.js';
import {
  admin,
  artifactsOf,
  c,
  creator,
  events,
  fake,
  finished,
  npcs,
  orchestrate,
  relay,
  runOf,
  stranger,
  t,
  tasksOf,
  useOrchestratorApp,
} from './workflows.orchestrator.fixtures.js';

useOrchestratorApp();

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
