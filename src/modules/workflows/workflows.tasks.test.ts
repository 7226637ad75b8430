// Tasks and artifacts of workflow instances on a real server and database (contract "Tasks,
// artifacts, orchestrator"): the allowed task moves, edits and reruns; artifacts draft → ready,
// reviewed once, the last approving review recording evidence that advances the instance to
// completion. Tasks and artifacts are created through the seams the orchestrator uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import type { RunHandle, WorkflowNotice } from './index.js';
import { client, expectProblem } from './workflows.fixtures.js';

let t: TestApp;
let admin: TestUser;
let creator: TestUser;
let c: ReturnType<typeof client>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso');
  creator = await createUser(t, 'public');
  c = client(t);
  // These tests drive the seams with stub executors; the orchestrator's own tests run the real one.
  t.deps.services.workflows.usePorts({ runExecutor: undefined });
});
afterAll(async () => {
  await t.close();
});

const work = () => t.deps.services.workflowTasks;

async function instanceWithTasks(machineId = 'triage_flow_v1', n = 2) {
  const i = await c.create(creator, { machineId, context: { title: 'Fix the crash' } });
  const tasks = await work().createTasks(
    t.deps.db,
    i.id,
    Array.from({ length: n }, (_, k) => ({
      title: `task ${k}`,
      specialty: k === 0 ? ('code' as const) : ('tests' as const),
    })),
  );
  return { instance: i, tasks };
}

const put = (user: TestUser, taskId: string, body: Record<string, unknown>) =>
  c.call(user, 'PUT', `/api/protocol/tasks/${taskId}`, body);

describe('tasks', () => {
  it('lists tasks, filters by status, and allows exactly the contract moves', async () => {
    const { instance, tasks } = await instanceWithTasks();
    const list = await c.call(creator, 'GET', `/api/protocol/instances/${instance.id}/tasks`);
    expect(list.status).toBe(200);
    expect(list.body.tasks).toHaveLength(2);
    expect(list.body.tasks[0]).toMatchObject({
      instanceId: instance.id,
      title: 'task 0',
      status: 'pending',
      specialty: 'code',
      assignedPersonaId: null,
      runCount: 0,
    });
    const id = tasks[0]!.id;
    // pending → completed is no move; the problem names what is allowed.
    expect(
      expectProblem(await put(creator, id, { status: 'completed' }), 409, 'invalid_transition'),
    ).toMatchObject({
      from: 'pending',
      to: 'completed',
      allowed: ['in_progress', 'blocked'],
    });
    const path: [string, number][] = [
      ['in_progress', 200],
      ['completed', 200],
      ['pending', 409],
      ['blocked', 409],
      ['in_progress', 200],
      ['blocked', 200],
      ['completed', 409],
      ['pending', 200],
      ['blocked', 200],
      ['in_progress', 200],
      ['pending', 200],
    ];
    for (const [status, code] of path) {
      const r = await put(creator, id, { status });
      expect(r.status, `${status}: ${r.text}`).toBe(code);
      if (code === 409) expect(r.body.code).toBe('invalid_transition');
    }
    const pending = await c.call(
      creator,
      'GET',
      `/api/protocol/instances/${instance.id}/tasks?status=pending`,
    );
    expect(pending.body.tasks.map((x: any) => x.id)).toEqual([tasks[0]!.id, tasks[1]!.id]);
    expectProblem(
      await c.call(creator, 'GET', `/api/protocol/instances/${instance.id}/tasks?status=done`),
      400,
      'validation_failed',
    );
  });

  it('edits fields, assigns a character (not any user), and records workflow_task_updated', async () => {
    const { instance, tasks } = await instanceWithTasks();
    const npc = await t.deps.services.characters.createNpc({ name: 'Coder', description: 'writes code' });
    const id = tasks[1]!.id;
    const r = await put(creator, id, {
      assignedPersonaId: npc.id,
      assignedHuman: 'Ana',
      notes: 'check flaky test',
      title: 'Stabilise tests',
      description: 'make them pass',
      metadata: { priority: 1 },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      assignedPersonaId: npc.id,
      assignedHuman: 'Ana',
      notes: 'check flaky test',
      title: 'Stabilise tests',
      description: 'make them pass',
      metadata: { priority: 1 },
      status: 'pending',
    });
    expectProblem(await put(creator, id, { assignedPersonaId: creator.id }), 400, 'validation_failed');
    expect((await put(creator, id, { assignedPersonaId: null })).body.assignedPersonaId).toBeNull();
    expectProblem(await put(creator, id, { title: '' }), 400, 'validation_failed');
    expectProblem(await put(creator, id, { status: 'done' }), 400, 'validation_failed');
    expectProblem(await put(creator, id, { unknown: 1 }), 400, 'validation_failed');
    expectProblem(
      await put(creator, '00000000-0000-4000-8000-000000000000', { notes: 'x' }),
      404,
      'not_found',
    );
    const events = (await c.call(creator, 'GET', `/api/protocol/instances/${instance.id}/timeline`)).body
      .events;
    const updates = events.filter((e: any) => e.eventType === 'workflow_task_updated');
    expect(updates).toHaveLength(2);
    expect(updates[1].metadata).toMatchObject({
      taskId: id,
      stateMachineInstanceId: instance.id,
      state: 'triage_intake',
    });
  });

  it('reruns a task alone: refused with no orchestrator (503), while it runs or a run is active (409)', async () => {
    const { instance, tasks } = await instanceWithTasks();
    expectProblem(
      await c.call(creator, 'POST', `/api/protocol/tasks/${tasks[0]!.id}/rerun`),
      503,
      'service_unavailable',
    );
    const handed: RunHandle[] = [];
    t.deps.services.workflows.usePorts({ runExecutor: (run) => handed.push(run) });
    try {
      await put(creator, tasks[1]!.id, { status: 'in_progress' });
      expectProblem(
        await c.call(creator, 'POST', `/api/protocol/tasks/${tasks[1]!.id}/rerun`),
        409,
        'conflict',
      );
      const run = await c.call(creator, 'POST', `/api/protocol/tasks/${tasks[0]!.id}/rerun`);
      expect(run.status, run.text).toBe(202);
      expect(run.body).toMatchObject({
        instanceId: instance.id,
        status: 'queued',
        trigger: 'rerun',
        taskIds: [tasks[0]!.id],
        progress: { total: 1, completed: 0, failed: 0 },
        error: null,
        finishedAt: null,
      });
      expect(handed).toEqual([
        { id: run.body.id, instanceId: instance.id, trigger: 'rerun', taskIds: [tasks[0]!.id] },
      ]);
      expect((await c.get(creator, instance.id)).body.activeRunId).toBe(run.body.id);
      const again = expectProblem(
        await c.call(creator, 'POST', `/api/protocol/tasks/${tasks[0]!.id}/rerun`),
        409,
        'conflict',
      );
      expect(again.run).toMatchObject({ id: run.body.id });
    } finally {
      t.deps.services.workflows.usePorts({ runExecutor: undefined });
    }
  });
});

describe('artifacts', () => {
  it('draft → ready, reviewed once; the last approval records evidence and advances to completion', async () => {
    const { instance, tasks } = await instanceWithTasks('documentation_flow_v1');
    const id: string = instance.id;
    const db = t.deps.db;
    const a1 = await work().createDraftArtifact(db, {
      instanceId: id,
      taskId: tasks[0]!.id,
      personaId: null,
      summary: 'API docs',
    });
    const a2 = await work().createDraftArtifact(db, {
      instanceId: id,
      taskId: tasks[1]!.id,
      personaId: null,
      summary: 'Tests',
    });
    expect(a1).toMatchObject({ status: 'draft', reviewStatus: 'pending', content: '' });

    // Forward to execution (approval advances triage).
    await c.transition(creator, id, 'triage');
    expect((await c.approve(admin, id)).body.instance.state).toBe('execution');

    const review = (artifactId: string, body: Record<string, unknown>) =>
      c.call(creator, 'POST', `/api/protocol/artifacts/${artifactId}/review`, body);
    expectProblem(await review(a1.id, { approve: true }), 409, 'conflict'); // still a draft
    await work().markArtifactReady(db, a1.id, '# API\nEvery endpoint.');
    await work().markArtifactReady(db, a2.id, 'it("works")');

    const list = await c.call(creator, 'GET', `/api/protocol/instances/${id}/artifacts`);
    expect(list.body.artifacts).toHaveLength(2);
    expect(list.body.artifacts[0]).not.toHaveProperty('content');
    expect(list.body.artifacts[0]).toMatchObject({
      id: a1.id,
      status: 'ready',
      reviewStatus: 'pending',
      summary: 'API docs',
    });
    const one = await c.call(creator, 'GET', `/api/protocol/artifacts/${a1.id}`);
    expect(one.body).toMatchObject({ id: a1.id, content: '# API\nEvery endpoint.' });
    const byTask = await c.call(
      creator,
      'GET',
      `/api/protocol/instances/${id}/artifacts?taskId=${tasks[1]!.id}`,
    );
    expect(byTask.body.artifacts.map((a: any) => a.id)).toEqual([a2.id]);

    // A rejection, then (the artifact is reviewed once) no second review.
    const rejected = await review(a2.id, { approve: false, notes: 'missing edge cases' });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body).toMatchObject({
      artifact: { reviewStatus: 'rejected', reviewedByUserId: creator.id, reviewNotes: 'missing edge cases' },
      advanced: null,
      instance: { state: 'execution' },
    });
    expect(rejected.body.artifact.reviewedAt).not.toBeNull();
    expectProblem(await review(a2.id, { approve: true }), 409, 'conflict');
    expectProblem(await review(a1.id, {}), 400, 'validation_failed');

    // A third artifact: approving a1 leaves it pending, so no evidence yet.
    const a3 = await work().createDraftArtifact(db, {
      instanceId: id,
      taskId: null,
      personaId: null,
      summary: 'Demo',
    });
    await work().markArtifactReady(db, a3.id, 'demo');
    const first = await review(a1.id, { approve: true });
    expect(first.body).toMatchObject({ advanced: null, instance: { state: 'execution' } });
    const pendingList = await c.call(
      creator,
      'GET',
      `/api/protocol/instances/${id}/artifacts?reviewStatus=pending`,
    );
    expect(pendingList.body.artifacts.map((a: any) => a.id)).toEqual([a3.id]);

    // The last approval: evidence (source artifact_review) and the guarded exit taken.
    const last = await review(a3.id, { approve: true, notes: 'good' });
    expect(last.status, last.text).toBe(200);
    expect(last.body.advanced).toEqual({
      from: 'execution',
      to: 'integration',
      guard: 'testsOrDemoAttached',
    });
    expect(last.body.instance.state).toBe('integration');
    const events = (await c.call(creator, 'GET', `/api/protocol/instances/${id}/timeline?limit=200`)).body
      .events;
    const evidence = events.filter((e: any) => e.eventType === 'verification_evidence');
    expect(evidence).toHaveLength(1);
    expect(evidence[0].metadata).toMatchObject({
      source: 'artifact_review',
      state: 'execution',
      artifactIds: [a1.id, a3.id],
    });
    expect(events.filter((e: any) => e.eventType === 'workflow_artifact_reviewed')).toHaveLength(3);
    const collected = events.find((e: any) => e.eventType === 'workflow_artifacts_collected');
    expect(collected.metadata.artifacts.map((a: any) => a.id)).toEqual([a1.id, a2.id, a3.id]);

    const done = await c.approve(admin, id);
    expect(done.body.instance.state).toBe('completed');

    // Completed: its tasks and artifacts are read-only too.
    expectProblem(await put(creator, tasks[0]!.id, { notes: 'late' }), 409, 'conflict');
    const a4 = await work().createDraftArtifact(db, {
      instanceId: id,
      taskId: null,
      personaId: null,
      summary: 'late',
    });
    await work().markArtifactReady(db, a4.id, 'late');
    expectProblem(await review(a4.id, { approve: true }), 409, 'conflict');
    expectProblem(
      await c.call(creator, 'POST', `/api/protocol/tasks/${tasks[0]!.id}/rerun`),
      409,
      'conflict',
    );
    // Reads stay.
    expect((await c.call(creator, 'GET', `/api/protocol/artifacts/${a4.id}`)).status).toBe(200);
  });

  it('completion cancels the active run', async () => {
    const handed: RunHandle[] = [];
    t.deps.services.workflows.usePorts({ runExecutor: (run) => handed.push(run) });
    try {
      const i = await c.create(creator, { machineId: 'documentation_flow_v1' });
      await c.transition(creator, i.id, 'triage');
      // Entering execution starts a run (announceExecutionStart, trigger state_entry).
      const exec = await c.approve(admin, i.id);
      expect(exec.body.instance.activeRunId).not.toBeNull();
      expect(handed.at(-1)).toMatchObject({ instanceId: i.id, trigger: 'state_entry' });
      await c.evidence(creator, i.id, { description: 'demo', proofUrl: 'https://demo.invalid/' });
      const done = await c.approve(admin, i.id);
      expect(done.body.instance).toMatchObject({ state: 'completed', activeRunId: null });
      const events = (await c.call(creator, 'GET', `/api/protocol/instances/${i.id}/timeline?limit=200`)).body
        .events;
      expect(events.find((e: any) => e.eventType === 'workflow_completed').metadata.canceledRunIds).toEqual([
        exec.body.instance.activeRunId,
      ]);
      expect(events.find((e: any) => e.eventType === 'workflow_execution_started').metadata.runId).toBe(
        exec.body.instance.activeRunId,
      );
    } finally {
      t.deps.services.workflows.usePorts({ runExecutor: undefined });
    }
  });
});

describe('ports', () => {
  it('hands each committed event of an instance with a channel to the notifier, and starts no run when the creator turned autoRunOrchestrator off', async () => {
    const posted: WorkflowNotice[] = [];
    const handed: RunHandle[] = [];
    t.deps.services.workflows.usePorts({
      notify: (n) => posted.push(n),
      runExecutor: (run) => handed.push(run),
      autoRunOrchestrator: async (userId) => userId !== creator.id,
    });
    try {
      const i = await c.create(creator, {
        machineId: 'documentation_flow_v1',
        channelId: 'c-9',
        guildId: 'g-1',
        context: { title: 'Docs' },
      });
      await c.transition(creator, i.id, 'triage');
      const exec = await c.approve(admin, i.id);
      expect(exec.body.instance).toMatchObject({ state: 'execution', activeRunId: null });
      expect(handed).toEqual([]);
      await c.evidence(creator, i.id, { description: 'demo', proofUrl: 'https://demo.invalid/' });
      await c.approve(admin, i.id);
      expect(new Set(posted.map((p) => [p.channelId, p.guildId, p.instanceId, p.title].join()))).toEqual(
        new Set([['c-9', 'g-1', i.id, 'Docs'].join()]),
      );
      // Each event once, in the order recorded, as the timeline holds it.
      const timeline = await c.call(creator, 'GET', `/api/protocol/instances/${i.id}/timeline?limit=100`);
      expect(posted.map((p) => p.event.id)).toEqual(timeline.body.events.map((e: any) => e.id).reverse());
      const types = posted.map((p) => p.event.eventType);
      for (const type of [
        'workflow_instance_created',
        'workflow_transition',
        'workflow_execution_started',
        'workflow_artifacts_collected',
        'verification_evidence',
        'workflow_completed',
      ])
        expect(types).toContain(type);
      const n = posted.length;
      // An instance without a channel posts nothing.
      const quiet = await c.create(creator, { machineId: 'documentation_flow_v1' });
      await c.transition(creator, quiet.id, 'triage');
      await c.approve(admin, quiet.id);
      expect(posted).toHaveLength(n);
    } finally {
      t.deps.services.workflows.usePorts({
        notify: undefined,
        runExecutor: undefined,
        autoRunOrchestrator: undefined,
      });
    }
  });
});
