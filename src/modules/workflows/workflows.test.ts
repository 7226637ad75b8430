// Workflow instances end to end on a real server and database (contract "Workflows"): both
// definitions, guards refused then satisfied (approval, evidence), rework exits, stale versions,
// completion, the timeline and /observer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  eventually,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
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
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

describe('definitions', () => {
  it('lists both stored definitions and shows one with its states and guarded transitions', async () => {
    const list = await c.call(creator, 'GET', '/api/protocol/definitions');
    expect(list.status).toBe(200);
    expect(list.body.definitions.map((d: any) => d.machineId)).toEqual([
      'documentation_flow_v1',
      'triage_flow_v1',
    ]);
    const one = await c.call(creator, 'GET', '/api/protocol/definitions/triage_flow_v1');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      machineId: 'triage_flow_v1',
      version: 1,
      protocolId: 'triage_support_v1',
      initial: 'triage_intake',
    });
    expect(one.body.states[2]).toEqual({
      name: 'execution_fix',
      terminal: false,
      checklist: ['Run the tasks', 'Review every artifact', 'Attach tests or a demo'],
      actions: ['announceExecutionStart'],
    });
    expect(one.body.transitions[1]).toEqual({
      from: 'tooling_analysis',
      to: 'execution_fix',
      guard: 'observerApproval',
    });
    expectProblem(await c.call(creator, 'GET', '/api/protocol/definitions/nope_v1'), 404, 'not_found');
    expect((await t.api('GET', '/api/protocol/definitions')).status).toBe(401);
  });

  it('are seeded with their workflow protocols', async () => {
    for (const [id, machineId] of [
      ['observer_onboarding_v1', 'documentation_flow_v1'],
      ['triage_support_v1', 'triage_flow_v1'],
    ]) {
      const p = await c.call(creator, 'GET', `/api/protocol/protocols/${id}`);
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ builtin: true, workflow: { machineId } });
    }
    // Seeding again inserts nothing.
    expect(await t.deps.services.workflows.seed()).toEqual({ inserted: [] });
  });
});

describe('documentation_flow_v1 end to end', () => {
  it('refuses what the definition lacks and unmet guards, advances on approval and evidence, completes', async () => {
    const rootId = await t.deps.services.timeline.rootObserverId();
    const watcher = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: admin.accessToken, observerId: rootId },
    });

    const created = await c.create(creator, {
      machineId: 'documentation_flow_v1',
      context: { title: 'Docs for the API', goal: 'Document every endpoint' },
      channelId: 'chan-1',
    });
    const id: string = created.id;
    expect(created).toMatchObject({
      machineId: 'documentation_flow_v1',
      protocolId: 'observer_onboarding_v1',
      state: 'intake',
      version: 1,
      stateVisit: 1,
      createdByUserId: creator.id,
      channelId: 'chan-1',
      guildId: null,
      checklist: ['Capture the goal', 'Break the work into tasks'],
      allowedTransitions: [{ to: 'triage', guard: null, satisfied: true, missing: [] }],
      registryInstanceId: null,
      activeRunId: null,
      archivedAt: null,
    });

    // No such exit: another state, the current one, an unknown one.
    for (const to of ['execution', 'intake', 'nowhere'])
      expect(expectProblem(await c.transition(creator, id, to), 409, 'invalid_transition')).toMatchObject({
        from: 'intake',
        to,
        allowed: ['triage'],
      });

    const triage = await c.transition(creator, id, 'triage', 1);
    expect(triage.status).toBe(200);
    expect(triage.body).toMatchObject({ state: 'triage', version: 2, stateVisit: 2 });
    // A stale version.
    expect(expectProblem(await c.transition(creator, id, 'execution', 1), 409, 'conflict')).toMatchObject({
      version: 2,
    });

    const refused = expectProblem(
      await c.transition(creator, id, 'execution', 2),
      409,
      'guard_not_satisfied',
    );
    expect(refused).toMatchObject({ guard: 'observerApproval', missing: ['approval'] });
    expect(refused.detail).toMatch(/approval/);

    // The creator is a participant but no approver.
    expectProblem(await c.approve(creator, id), 403, 'forbidden');
    const approval = await c.approve(admin, id, { note: 'tasks look right', expectedVersion: 2 });
    expect(approval.status, approval.text).toBe(201);
    expect(approval.body.approval).toMatchObject({
      instanceId: id,
      state: 'triage',
      stateVisit: 2,
      approvedByUserId: admin.id,
      note: 'tasks look right',
    });
    expect(approval.body.advanced).toEqual({ from: 'triage', to: 'execution', guard: 'observerApproval' });
    expect(approval.body.instance).toMatchObject({ state: 'execution', version: 3, stateVisit: 3 });
    expect(approval.body.instance.allowedTransitions).toEqual([
      { to: 'integration', guard: 'testsOrDemoAttached', satisfied: false, missing: ['evidence'] },
      { to: 'triage', guard: null, satisfied: true, missing: [] },
    ]);

    const noEvidence = expectProblem(
      await c.transition(creator, id, 'integration'),
      409,
      'guard_not_satisfied',
    );
    expect(noEvidence).toMatchObject({ guard: 'testsOrDemoAttached', missing: ['evidence'] });
    expect(noEvidence.detail).toMatch(/evidence/);

    // Rework: back to triage; the earlier visit's approval does not count in the new one.
    expect((await c.transition(creator, id, 'triage')).body).toMatchObject({
      state: 'triage',
      stateVisit: 4,
    });
    expectProblem(await c.transition(creator, id, 'execution'), 409, 'guard_not_satisfied');
    expect((await c.approve(admin, id)).body.advanced).toMatchObject({ to: 'execution' });

    // Evidence: a bad URL stores nothing; a good one advances.
    const before = (await c.get(creator, id)).body;
    expectProblem(
      await c.evidence(creator, id, { description: 'tests', proofUrl: 'ftp://example.com/x' }),
      400,
      'validation_failed',
    );
    expect((await c.get(creator, id)).body.version).toBe(before.version);
    const ev = await c.evidence(creator, id, {
      description: 'CI run green',
      proofUrl: 'https://ci.example.invalid/runs/1',
      expectedVersion: before.version,
    });
    expect(ev.status, ev.text).toBe(201);
    expect(ev.body.evidence).toMatchObject({
      eventType: 'verification_evidence',
      userId: creator.id,
      instanceId: null,
      observerId: rootId,
      metadata: {
        stateMachineInstanceId: id,
        machineId: 'documentation_flow_v1',
        state: 'execution',
        description: 'CI run green',
        proofUrl: 'https://ci.example.invalid/runs/1',
        source: 'api',
      },
    });
    expect(ev.body.advanced).toEqual({ from: 'execution', to: 'integration', guard: 'testsOrDemoAttached' });
    expect(ev.body.instance).toMatchObject({
      state: 'integration',
      checklist: ['Merge approved artifacts', "Get the observer's sign-off"],
    });

    // collectArtifacts left the creator a shared memory listing the artifacts.
    const memories = await c.call(creator, 'GET', '/api/memories');
    expect(
      memories.body.memories.some(
        (m: any) => m.source === 'shared' && /Artifacts of workflow "Docs for the API"/.test(m.content),
      ),
    ).toBe(true);

    expectProblem(await c.transition(creator, id, 'completed'), 409, 'guard_not_satisfied');
    const done = await c.approve(admin, id);
    expect(done.body.advanced).toEqual({ from: 'integration', to: 'completed', guard: 'observerApproval' });
    expect(done.body.instance).toMatchObject({ state: 'completed', allowedTransitions: [], checklist: [] });
    expect(done.body.instance.archivedAt).not.toBeNull();

    // Completed: read-only.
    expect(
      expectProblem(await c.transition(creator, id, 'integration'), 409, 'invalid_transition'),
    ).toMatchObject({
      from: 'completed',
      allowed: [],
    });
    expectProblem(await c.approve(admin, id), 409, 'conflict');
    expectProblem(
      await c.evidence(creator, id, { description: 'x', proofUrl: 'https://e.invalid/' }),
      409,
      'conflict',
    );

    const approvals = await c.call(creator, 'GET', `/api/protocol/instances/${id}/approvals`);
    expect(approvals.body.approvals.map((a: any) => [a.state, a.stateVisit])).toEqual([
      ['triage', 2],
      ['triage', 4],
      ['integration', 6],
    ]);

    const timeline = await c.call(creator, 'GET', `/api/protocol/instances/${id}/timeline?limit=200`);
    expect(timeline.status).toBe(200);
    const types = (timeline.body.events as any[]).map((e) => e.eventType).reverse();
    expect(types[0]).toBe('workflow_instance_created');
    expect(types.at(-1)).toBe('workflow_completed');
    for (const type of [
      'workflow_checklist',
      'workflow_transition',
      'workflow_approval',
      'verification_evidence',
      'workflow_execution_started',
      'workflow_artifacts_collected',
    ])
      expect(types).toContain(type);
    const autos = (timeline.body.events as any[])
      .filter((e) => e.eventType === 'workflow_transition')
      .map((e) => [e.metadata.from, e.metadata.to, e.metadata.auto, e.metadata.undo])
      .reverse();
    expect(autos).toEqual([
      ['intake', 'triage', false, false],
      ['triage', 'execution', true, false],
      ['execution', 'triage', false, false],
      ['triage', 'execution', true, false],
      ['execution', 'integration', true, false],
      ['integration', 'completed', true, false],
    ]);
    const last = await c.call(creator, 'GET', `/api/protocol/instances/${id}/timeline?limit=1`);
    expect(last.body.events.map((e: any) => e.eventType)).toEqual(['workflow_completed']);

    // Every event reached the root observer's room (on PostgreSQL the adapter may deliver one
    // commit's events in another order).
    const live = await eventually(() => {
      const got = watcher.events
        .filter((e) => e.name === 'timeline_update' && e.payload.metadata.stateMachineInstanceId === id)
        .map((e) => e.payload.eventType as string);
      expect(got).toHaveLength(types.length);
      return got;
    });
    expect([...live].sort()).toEqual([...types].sort());
    watcher.close();
  });
});

describe('triage_flow_v1 end to end', () => {
  it('runs to completed through approval, evidence and rework', async () => {
    const i = await c.create(creator, { machineId: 'triage_flow_v1', protocolId: 'triage_support_v1' });
    expect(i).toMatchObject({ state: 'triage_intake', protocolId: 'triage_support_v1' });
    expect((await c.transition(creator, i.id, 'tooling_analysis')).status).toBe(200);
    expectProblem(await c.transition(creator, i.id, 'execution_fix'), 409, 'guard_not_satisfied');
    expect((await c.approve(admin, i.id)).body.instance.state).toBe('execution_fix');
    expectProblem(await c.transition(creator, i.id, 'stabilization'), 409, 'guard_not_satisfied');
    const ev = await c.evidence(creator, i.id, { description: 'demo', proofUrl: 'http://demo.invalid/v' });
    expect(ev.body.instance.state).toBe('stabilization');
    // Rework from stabilization, then forward again with new evidence.
    expect((await c.transition(creator, i.id, 'execution_fix')).body.state).toBe('execution_fix');
    expectProblem(await c.transition(creator, i.id, 'stabilization'), 409, 'guard_not_satisfied');
    await c.evidence(creator, i.id, { description: 'demo 2', proofUrl: 'https://demo.invalid/v2' });
    const done = await c.approve(admin, i.id);
    expect(done.body.instance).toMatchObject({ state: 'completed', allowedTransitions: [] });
  });

  it('takes an unguarded transition with approval or evidence recorded beforehand only when asked', async () => {
    const i = await c.create(creator, { machineId: 'triage_flow_v1' });
    // An approval in a state without a guarded exit is recorded and moves nothing.
    const a = await c.approve(admin, i.id);
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ advanced: null, instance: { state: 'triage_intake', version: 2 } });
  });
});

describe('creating', () => {
  it('refuses an unknown machine or a protocol that is not its workflow protocol (422)', async () => {
    expect(
      expectProblem(
        await c.call(creator, 'POST', '/api/protocol/instances', { machineId: 'nope_flow_v1' }),
        422,
        'invalid_definition',
      ),
    ).toBeDefined();
    expectProblem(
      await c.call(creator, 'POST', '/api/protocol/instances', {
        machineId: 'documentation_flow_v1',
        protocolId: 'triage_support_v1',
      }),
      422,
      'invalid_definition',
    );
  });

  it('answers bad input with 400 problem+json and stores nothing', async () => {
    const count = async () =>
      (await c.call(admin, 'GET', '/api/protocol/instances?limit=1')).body.total as number;
    const before = await count();
    const bad: unknown[] = [
      {},
      { machineId: 42 },
      { machineId: 'documentation_flow_v1', extra: true },
      { machineId: 'documentation_flow_v1', context: 'text' },
      {
        machineId: 'documentation_flow_v1',
        context: { tasks: Array.from({ length: 21 }, (_, n) => ({ title: `t${n}` })) },
      },
      { machineId: 'documentation_flow_v1', context: { tasks: [{ title: 'x', specialty: 'magic' }] } },
      { machineId: 'documentation_flow_v1', context: { blob: 'x'.repeat(64 * 1024) } },
      { machineId: 'documentation_flow_v1', channelId: '' },
    ];
    for (const body of bad) {
      const r = await c.call(creator, 'POST', '/api/protocol/instances', body);
      expect(expectProblem(r, 400, 'validation_failed').errors.length, JSON.stringify(body)).toBeGreaterThan(
        0,
      );
    }
    const i = await c.create(creator, { machineId: 'documentation_flow_v1' });
    expectProblem(
      await c.call(creator, 'POST', `/api/protocol/instances/${i.id}/transition`, {}),
      400,
      'validation_failed',
    );
    expectProblem(await c.transition(creator, i.id, 'triage', 0), 400, 'validation_failed');
    expectProblem(
      await c.call(creator, 'GET', '/api/protocol/instances/not-a-uuid'),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.evidence(creator, i.id, { description: '', proofUrl: 'https://e.invalid/' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.evidence(creator, i.id, {
        description: 'x',
        proofUrl: 'https://e.invalid/' + 'a'.repeat(2048),
      }),
      400,
      'validation_failed',
    );
    expectProblem(await c.approve(admin, i.id, { note: 'x'.repeat(2001) }), 400, 'validation_failed');
    expect(await count()).toBe(before + 1);
    expect((await c.get(creator, i.id)).body).toMatchObject({ version: 1, state: 'intake' });
  });
});

describe('concurrency', () => {
  it('two transitions of one instance at once: exactly one wins', async () => {
    for (const expectedVersion of [undefined, 1]) {
      const i = await c.create(creator, { machineId: 'documentation_flow_v1' });
      const results = await Promise.all([
        c.transition(creator, i.id, 'triage', expectedVersion),
        c.transition(creator, i.id, 'triage', expectedVersion),
      ]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expect(loser.body.code).toBe(expectedVersion === undefined ? 'invalid_transition' : 'conflict');
      const after = (await c.get(creator, i.id)).body;
      expect(after).toMatchObject({ state: 'triage', version: 2, stateVisit: 2 });
      const events = (await c.call(creator, 'GET', `/api/protocol/instances/${i.id}/timeline`)).body.events;
      expect(events.filter((e: any) => e.eventType === 'workflow_transition')).toHaveLength(1);
    }
  });
});
