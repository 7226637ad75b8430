// Executing suggestions end to end (contract "Suggestions"): every action type through the
// workflow services with the caller's rights, a refused operation (its problem passes through and
// is kept in the history), CANCEL, follow-ups, the protocol selection and workflow creation on a
// chat-platform channel, and the undo of an auto-executed transition inside and outside its window
// and after the instance moved on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../../../test/expect-problem.js';
import { createTestApp, createUser, eventually, type TestApp, type TestUser } from '../../../test/harness.js';
import { manualClock, MINUTE, suggestionsClient } from './suggestions.fixtures.js';

const clock = manualClock();
let t: TestApp;
let c: ReturnType<typeof suggestionsClient>;

beforeAll(async () => {
  t = await createTestApp({}, { clock: clock.now });
  c = suggestionsClient(t);
});
afterAll(async () => {
  await t.close();
});

const types = (list: any[]) => list.map((s) => s.type);
/** Waits for the instance's runs to finish (the orchestrator's job, offline drafts). */
async function runsDone(user: TestUser, instanceId: string) {
  await eventually(
    async () => {
      const { runs } = await c.ok(user, 'GET', `/api/protocol/instances/${instanceId}/runs`);
      expect(runs.every((r: any) => r.status === 'completed')).toBe(true);
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
}

describe('execute, per action type', () => {
  it('runs a documentation flow through its suggestions, with the caller’s rights', async () => {
    const admin = await createUser(t, 'cso', { name: 'Ada' });
    await c.config(admin, { neverAutoExecute: ['VIEW'] });
    const i = await c.instance(admin, { machineId: 'documentation_flow_v1', context: { title: 'Docs' } });

    // EXECUTE (BREAK_DOWN_TASKS): an orchestrator run that seeds and assigns only.
    const breakDown = await c.find(admin, i.id, 'BREAK_DOWN_TASKS');
    clock.advance(2000);
    const broken = await c.execute(admin, i.id, { suggestionId: breakDown.id });
    expect(broken.status, broken.text).toBe(200);
    expect(broken.body.result).toMatchObject({ instanceId: i.id, trigger: 'suggestion' });
    expect(broken.body.suggestion).toMatchObject({
      status: 'executed',
      actionType: 'EXECUTE',
      autoExecuted: false,
      responseTimeMs: 2000,
      executedAt: clock.now().toISOString(),
      error: null,
    });
    expect(broken.body.suggestion.executionTimeMs).toBeGreaterThanOrEqual(0);
    await runsDone(admin, i.id);
    const { tasks } = await c.ok(admin, 'GET', `/api/protocol/instances/${i.id}/tasks`);
    expect(tasks.map((x: any) => x.status)).toEqual(['pending', 'pending', 'pending']);
    // Executed: not made again while the visit lasts (a next step may remain, when the run was
    // still seeding as the execution's pass looked); again → 409.
    const seeded = types((await c.list(admin, i.id)).suggestions);
    expect(seeded.slice(0, 2)).toEqual(['RUN_ORCHESTRATOR', 'TRANSITION_STATE']);
    expect(seeded.slice(2)).toEqual(seeded.length > 2 ? ['SUGGEST_NEXT_STEP'] : []);
    expectProblem(await c.execute(admin, i.id, { suggestionId: breakDown.id }), 409, 'conflict');

    // TRANSITION: the instance moves (the event names the suggestion); its follow-ups are what the
    // next pass made for the new state, in order, none executed.
    const move = await c.find(admin, i.id, 'TRANSITION_STATE');
    const moved = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, { suggestionId: move.id });
    expect(moved.result).toMatchObject({ id: i.id, state: 'triage', stateVisit: 2 });
    expect(types(moved.followUps)).toEqual(['APPROVE_GUARD', 'RUN_ORCHESTRATOR']);
    expect(moved.followUps.every((f: any) => f.status === 'active')).toBe(true);
    const { events } = await c.ok(admin, 'GET', `/api/protocol/instances/${i.id}/timeline`);
    expect(events.find((e: any) => e.eventType === 'workflow_transition').metadata).toMatchObject({
      from: 'intake',
      to: 'triage',
      auto: false,
      undo: false,
      suggestionId: move.id,
    });

    // APPROVE (the admin approves): the guard is met and the instance advances; entering
    // execution starts a run of the pending tasks.
    const approve = moved.followUps[0];
    const approved = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: approve.id,
      params: { note: 'looks right' },
    });
    expect(approved.result).toMatchObject({
      approval: { note: 'looks right', approvedByUserId: admin.id },
      advanced: { from: 'triage', to: 'execution', guard: 'observerApproval' },
      instance: { state: 'execution' },
    });
    expect(types(approved.followUps)).toContain('ATTACH_EVIDENCE');
    await runsDone(admin, i.id);

    // VIEW: the artifacts (without content); nothing new follows, so a next step is suggested.
    const listed = await c.list(admin, i.id);
    expect(types(listed.suggestions)).toEqual([
      'ATTACH_EVIDENCE',
      'REVIEW_ARTIFACT',
      'REVIEW_ARTIFACT',
      'REVIEW_ARTIFACT',
      'VIEW_ARTIFACTS',
    ]);
    const view = listed.suggestions.at(-1);
    const viewed = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, { suggestionId: view.id });
    expect(viewed.result.artifacts).toHaveLength(3);
    expect(viewed.result.artifacts[0].content).toBeUndefined();
    expect(viewed.followUps).toMatchObject([
      {
        type: 'SUGGEST_NEXT_STEP',
        priority: 20,
        actions: [{ type: 'SHOW_STATUS', safety: 'SAFE' }, { type: 'CANCEL' }],
      },
    ]);
    // SHOW_STATUS: the instance; no next step after a next step.
    const status = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: viewed.followUps[0].id,
    });
    expect(status.result).toMatchObject({ id: i.id, state: 'execution' });
    expect(status.followUps).toEqual([]);

    // REVIEW: `approve` is the caller's to give.
    const [r1, r2, r3] = listed.suggestions.filter((s: any) => s.type === 'REVIEW_ARTIFACT');
    const missing = expectProblem(
      await c.execute(admin, i.id, { suggestionId: r1.id }),
      400,
      'validation_failed',
    );
    expect(missing.errors).toEqual([{ path: 'params.approve', message: expect.any(String) }]);
    expect(
      (
        await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
          suggestionId: r1.id,
          params: { approve: true },
        })
      ).result,
    ).toMatchObject({
      artifact: { id: r1.metadata.artifactId, reviewStatus: 'approved' },
      advanced: null,
    });
    // A refused operation: the artifact was reviewed meanwhile, by a write whose pass has not run
    // yet (a background pass would expire r2 once it saw the review): the earlier writes' passes
    // are let finish, then the review is written straight to the database, as another node's
    // write before its job ran. Its problem passes through and is kept with the suggestion, which
    // stays active.
    await t.deps.jobs.drain(15_000);
    await t.deps.db
      .updateTable('workflow_artifacts')
      .set({ review_status: 'approved', reviewed_by_user_id: admin.id, reviewed_at: new Date() })
      .where('id', '=', r2.metadata.artifactId)
      .execute();
    const refused = expectProblem(
      await c.execute(admin, i.id, { suggestionId: r2.id, params: { approve: true } }),
      409,
      'conflict',
    );
    expect(refused.detail).toMatch(/already reviewed/);
    const kept = (await c.history(admin, `instance/${i.id}`)).find((s: any) => s.id === r2.id);
    expect(kept).toMatchObject({
      status: 'active',
      actionType: 'REVIEW',
      executedAt: null,
      error: { status: 409, code: 'conflict', detail: refused.detail },
    });
    expect(kept.executionTimeMs).toBeGreaterThanOrEqual(0);
    // The last review records evidence and advances to integration.
    const last = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: r3.id,
      params: { approve: true },
    });
    expect(last.result.advanced).toMatchObject({ from: 'execution', to: 'integration' });

    // EXECUTE (GENERATE_DOCUMENTATION): a docs task, and a run that writes it.
    const docs = await c.find(admin, i.id, 'GENERATE_DOCUMENTATION');
    const generated = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: docs.id,
    });
    expect(generated.result).toMatchObject({ trigger: 'suggestion', status: 'queued' });
    const after = await c.ok(admin, 'GET', `/api/protocol/instances/${i.id}/tasks`);
    expect(after.tasks.at(-1)).toMatchObject({ title: 'Write the documentation', specialty: 'docs' });
    await runsDone(admin, i.id);

    // CANCEL declines (and nothing follows); a declined key is not made again.
    const signOff = await c.find(admin, i.id, 'APPROVE_GUARD');
    const cancelled = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: signOff.id,
      actionType: 'CANCEL',
    });
    expect(cancelled).toMatchObject({
      suggestion: { status: 'declined', actionType: 'CANCEL', executedAt: null },
      result: null,
      followUps: [],
    });
    expect(types((await c.list(admin, i.id)).suggestions)).not.toContain('APPROVE_GUARD');
    // An action the suggestion does not offer.
    const offered = expectProblem(
      await c.execute(admin, i.id, {
        suggestionId: (await c.find(admin, i.id, 'REVIEW_ARTIFACT')).id,
        actionType: 'APPROVE',
      }),
      400,
      'validation_failed',
    );
    expect(offered.errors[0]).toMatchObject({ path: 'actionType' });
  });

  it('ATTACH_EVIDENCE takes the caller’s description and proofUrl', async () => {
    const admin = await createUser(t, 'cso');
    await c.config(admin, { autoRunOrchestrator: false });
    const i = await c.instance(admin, { machineId: 'triage_flow_v1' });
    await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: (await c.find(admin, i.id, 'TRANSITION_STATE')).id,
    });
    await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: (await c.find(admin, i.id, 'APPROVE_GUARD')).id,
    });
    const evidence = await c.find(admin, i.id, 'ATTACH_EVIDENCE');
    expect(evidence).toMatchObject({
      priority: 85,
      context: { state: 'execution_fix' },
      actions: [{ type: 'ATTACH_EVIDENCE', safety: 'NEVER_AUTO' }, { type: 'CANCEL' }],
    });
    const bad = expectProblem(
      await c.execute(admin, i.id, { suggestionId: evidence.id }),
      400,
      'validation_failed',
    );
    expect(bad.errors.map((e: any) => e.path).sort()).toEqual(['params.description', 'params.proofUrl']);
    expectProblem(
      await c.execute(admin, i.id, {
        suggestionId: evidence.id,
        params: { description: 'tests', proofUrl: 'ftp://x.example/' },
      }),
      400,
      'validation_failed',
    );
    const attached = await c.ok(admin, 'POST', `/api/suggestions/${i.id}/execute`, {
      suggestionId: evidence.id,
      params: { description: 'CI run green', proofUrl: 'https://ci.example/run/1' },
    });
    expect(attached.result).toMatchObject({
      evidence: {
        eventType: 'verification_evidence',
        metadata: { proofUrl: 'https://ci.example/run/1', source: 'suggestion' },
      },
      instance: { state: 'stabilization' },
      advanced: { from: 'execution_fix', to: 'stabilization' },
    });
  });

  it('a channel: choose a protocol (after questions), create its workflow, bound to the channel', async () => {
    const carol = await createUser(t, 'public', { name: 'Carol' });
    const channel = 'chan-exec-1';
    const [select] = (await c.list(carol, channel, 'Please implement the billing API')).suggestions;
    expect(select).toMatchObject({
      type: 'SELECT_PROTOCOL',
      metadata: { intent: 'development', protocolId: 'observer_onboarding_v1' },
    });
    // ASK_QUESTIONS: questions first; the suggestion stays open (accepted) for the choice.
    clock.advance(1000);
    const asked = await c.ok(carol, 'POST', `/api/suggestions/${channel}/execute`, {
      suggestionId: select.id,
      actionType: 'ASK_QUESTIONS',
    });
    expect(asked).toMatchObject({
      suggestion: { status: 'accepted', actionType: 'ASK_QUESTIONS', executedAt: null },
      result: {
        protocolId: 'observer_onboarding_v1',
        questions: expect.arrayContaining([expect.any(String)]),
      },
      followUps: [],
    });
    // EXECUTE: the protocol is chosen for this context; what follows is a workflow to start.
    clock.advance(1000);
    const chosen = await c.ok(carol, 'POST', `/api/suggestions/${channel}/execute`, {
      suggestionId: select.id,
    });
    expect(chosen.result).toEqual({ protocolId: 'observer_onboarding_v1' });
    expect(chosen.suggestion.status).toBe('executed');
    expect(chosen.followUps).toMatchObject([
      {
        type: 'CREATE_STATE_MACHINE',
        context: { channelId: channel, protocolId: 'observer_onboarding_v1' },
        actions: [{ params: { machineId: 'documentation_flow_v1' } }, { type: 'CANCEL' }],
      },
    ]);
    // EXECUTE (CREATE_STATE_MACHINE): the instance, in the channel, bound to the context.
    clock.advance(1000);
    const created = await c.ok(carol, 'POST', `/api/suggestions/${channel}/execute`, {
      suggestionId: chosen.followUps[0].id,
    });
    expect(created.result).toMatchObject({
      machineId: 'documentation_flow_v1',
      channelId: channel,
      createdByUserId: carol.id,
      state: 'intake',
    });
    expect(types(created.followUps)).toEqual(['BREAK_DOWN_TASKS', 'TRANSITION_STATE']);
    expect(created.followUps[0].context).toMatchObject({
      instanceId: created.result.id,
      channelId: channel,
      state: 'intake',
    });
    expect((await c.list(carol, channel)).suggestions.map((s: any) => s.id)).toEqual(
      created.followUps.map((s: any) => s.id),
    );
    // The channel's history, newest first, with timings.
    const history = await c.history(carol, channel);
    expect(types(history).slice(-2)).toEqual(['CREATE_STATE_MACHINE', 'SELECT_PROTOCOL']);
    expect(history.at(-1)).toMatchObject({
      status: 'executed',
      actionType: 'EXECUTE',
      responseTimeMs: expect.any(Number),
      executionTimeMs: expect.any(Number),
    });
    // A conversation: the chosen protocol is per context.
    const conv = await c.ok(carol, 'POST', '/api/conversations', {}, 201);
    expect(types((await c.list(carol, `conversation:${conv.id}`)).suggestions)).toEqual([]);
  });
});

describe('undo of an auto-executed transition', () => {
  async function autoTransitioned(user: TestUser) {
    const i = await c.instance(user, { machineId: 'documentation_flow_v1' });
    // The GET's pass (or the job's, whichever comes first) takes the free exit by itself.
    await c.list(user, i.id);
    return eventually(async () => {
      const [s] = (await c.history(user, `instance/${i.id}`)).filter(
        (h: any) => h.type === 'TRANSITION_STATE',
      );
      expect(s).toMatchObject({
        status: 'executed',
        autoExecuted: true,
        actionType: 'TRANSITION',
        undoneAt: null,
      });
      return { instance: i, suggestion: s };
    });
  }

  it('goes back to the previous state and visit within the window, once, and is not redone', async () => {
    const dave = await createUser(t, 'public');
    await c.config(dave, { autoTransitionOnGuard: true, autoRunOrchestrator: false });
    const { instance, suggestion } = await autoTransitioned(dave);
    const moved = await c.ok(dave, 'GET', `/api/protocol/instances/${instance.id}`);
    expect(moved).toMatchObject({ state: 'triage', stateVisit: 2 });
    clock.advance(4 * MINUTE);
    const undone = await c.ok(dave, 'POST', `/api/suggestions/${instance.id}/${suggestion.id}/undo`);
    expect(undone.suggestion).toMatchObject({
      id: suggestion.id,
      status: 'executed',
      undoneAt: clock.now().toISOString(),
    });
    expect(undone.result).toMatchObject({ state: 'intake', stateVisit: 1, version: moved.version + 1 });
    const { events } = await c.ok(dave, 'GET', `/api/protocol/instances/${instance.id}/timeline`);
    expect(events[0]).toMatchObject({
      eventType: 'workflow_transition',
      metadata: {
        from: 'triage',
        to: 'intake',
        undo: true,
        suggestionId: suggestion.id,
        state: 'intake',
        stateVisit: 1,
      },
    });
    // Not done again by the next pass; not undone twice.
    const next = await c.list(dave, instance.id);
    expect(types(next.suggestions)).toEqual(['BREAK_DOWN_TASKS']);
    expect(next.autoExecuted).toEqual([]);
    expect((await c.ok(dave, 'GET', `/api/protocol/instances/${instance.id}`)).state).toBe('intake');
    expectProblem(
      await c.call(dave, 'POST', `/api/suggestions/${instance.id}/${suggestion.id}/undo`),
      409,
      'conflict',
    );
  });

  it('is refused outside the window, after the instance moved on, and for what was not auto-executed', async () => {
    const erin = await createUser(t, 'public');
    const admin = await createUser(t, 'cso');
    await c.config(erin, { autoTransitionOnGuard: true, autoRunOrchestrator: false, undoWindowMinutes: 5 });
    const late = await autoTransitioned(erin);
    clock.advance(5 * MINUTE + 1);
    const outside = expectProblem(
      await c.call(erin, 'POST', `/api/suggestions/${late.instance.id}/${late.suggestion.id}/undo`),
      409,
      'conflict',
    );
    expect(outside.detail).toMatch(/undo window/);
    expect((await c.ok(erin, 'GET', `/api/protocol/instances/${late.instance.id}`)).state).toBe('triage');

    const movedOn = await autoTransitioned(erin);
    await c.ok(admin, 'POST', `/api/protocol/instances/${movedOn.instance.id}/approvals`, {}, 201);
    const changed = expectProblem(
      await c.call(erin, 'POST', `/api/suggestions/${movedOn.instance.id}/${movedOn.suggestion.id}/undo`),
      409,
      'conflict',
    );
    expect(changed.detail).toMatch(/changed/);
    expect((await c.ok(erin, 'GET', `/api/protocol/instances/${movedOn.instance.id}`)).state).toBe(
      'execution',
    );

    const frank = await createUser(t, 'public');
    const i = await c.instance(frank, { machineId: 'documentation_flow_v1' });
    const manual = await c.find(frank, i.id, 'TRANSITION_STATE');
    await c.ok(frank, 'POST', `/api/suggestions/${i.id}/execute`, { suggestionId: manual.id });
    expectProblem(await c.call(frank, 'POST', `/api/suggestions/${i.id}/${manual.id}/undo`), 409, 'conflict');
    // Another user's suggestion is not found.
    expectProblem(
      await c.call(frank, 'POST', `/api/suggestions/${late.instance.id}/${late.suggestion.id}/undo`),
      404,
      'not_found',
    );
  });
});
