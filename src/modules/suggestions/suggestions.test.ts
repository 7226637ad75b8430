// Suggestions end to end on a real server and database (contract "Suggestions"): the trigger table
// row by row through a whole documentation flow, ordering and the cap of ten, ttl expiry on the
// injected clock, one open suggestion per key, and the pass after an instance write. A user's
// answers, the config and who sees what are in suggestions.answers.test.ts; the app and users
// both files use are made by `useSuggestionsApp()` (suggestions.fixtures.ts).
import { describe, expect, it } from 'vitest';
import { createUser, eventually } from '../../../test/harness.js';
import { admin, c, clock, creator, MINUTE, other, t, useSuggestionsApp } from './suggestions.fixtures.js';
import * as repo from './suggestions.repository.js';
import { DEFAULT_CONFIG } from './suggestions.rules.js';
import * as settings from './suggestions.settings.repository.js';

useSuggestionsApp();

const byType = (history: any[], type: string) => history.filter((s) => s.type === type);

describe('the trigger table, row by row', () => {
  it('each type appears exactly while its trigger holds, through a whole documentation flow', async () => {
    const i = await c.instance(creator, { machineId: 'documentation_flow_v1', context: { title: 'Flow' } });
    // intake, no tasks: break them down; the forward exit is free: move on.
    const first = await c.list(creator, i.id);
    expect(first.contextId).toBe(i.id);
    expect(first.suggestions.map((s: any) => s.type)).toEqual(['BREAK_DOWN_TASKS', 'TRANSITION_STATE']);
    expect(first.suggestions[0]).toMatchObject({
      status: 'active',
      priority: 80,
      confidence: 0.8,
      ttl: 3600,
      timestamp: clock.now().toISOString(),
      context: {
        contextId: i.id,
        instanceId: i.id,
        userId: creator.id,
        protocolId: 'observer_onboarding_v1',
        state: 'intake',
      },
      actions: [
        { type: 'EXECUTE', safety: 'NEVER_AUTO', autoExecutable: false, params: { runTasks: false } },
        { type: 'CANCEL', safety: 'NEVER_AUTO', autoExecutable: false },
      ],
    });
    expect(first.suggestions[1].actions[0]).toMatchObject({
      type: 'TRANSITION',
      safety: 'REQUIRES_CONFIRMATION',
      autoExecutable: false,
      params: { targetState: 'triage' },
    });
    // A pending task: no more breaking down; run the orchestrator on it.
    const [task] = await t.deps.services.workflowTasks.createTasks(t.deps.db, i.id, [{ title: 'Write it' }]);
    expect(await c.types(creator, i.id)).toEqual(['RUN_ORCHESTRATOR', 'TRANSITION_STATE']);
    const expired = byType(await c.history(creator, `instance/${i.id}`), 'BREAK_DOWN_TASKS');
    expect(expired).toMatchObject([{ status: 'expired', expiredReason: 'trigger' }]);

    // triage: the approval guard is the approver's (the admin), not the creator's.
    expect(
      (await c.call(creator, 'POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' }))
        .status,
    ).toBe(200);
    expect(await c.types(creator, i.id)).toEqual(['RUN_ORCHESTRATOR']);
    expect(await c.types(admin, i.id)).toEqual(['APPROVE_GUARD', 'RUN_ORCHESTRATOR']);
    // The task done: nothing to run.
    for (const status of ['in_progress', 'completed'])
      expect((await c.call(creator, 'PUT', `/api/protocol/tasks/${task!.id}`, { status })).status).toBe(200);
    expect(await c.types(creator, i.id)).toEqual([]);

    // execution (the approval advances): evidence is what the forward exit needs.
    expect(
      (await c.call(admin, 'POST', `/api/protocol/instances/${i.id}/approvals`, {})).body.advanced,
    ).toMatchObject({ to: 'execution' });
    expect(await c.types(creator, i.id)).toEqual(['ATTACH_EVIDENCE']);
    // Artifacts: a ready one to review (a draft one is not), both to view.
    const [ready] = await c.readyArtifacts(i.id, 1, 'Ready');
    await t.deps.services.workflowTasks.createDraftArtifact(t.deps.db, {
      instanceId: i.id,
      taskId: null,
      personaId: null,
      summary: 'Draft',
    });
    const withArtifacts = await c.list(creator, i.id);
    expect(withArtifacts.suggestions.map((s: any) => s.type)).toEqual([
      'ATTACH_EVIDENCE',
      'REVIEW_ARTIFACT',
      'VIEW_ARTIFACTS',
    ]);
    expect(withArtifacts.suggestions[1]).toMatchObject({
      message: 'Review the artifact "Ready 1"',
      actions: [{ type: 'REVIEW', params: { artifactId: ready!.id } }, { type: 'CANCEL' }],
    });
    expect(
      (await c.call(creator, 'POST', `/api/protocol/artifacts/${ready!.id}/review`, { approve: true }))
        .status,
    ).toBe(200);
    expect(await c.types(creator, i.id)).toEqual(['ATTACH_EVIDENCE', 'VIEW_ARTIFACTS']);

    // integration (evidence advances): generate the documentation.
    const ev = await c.call(creator, 'POST', `/api/protocol/instances/${i.id}/evidence`, {
      description: 'demo',
      proofUrl: 'https://demo.example/',
    });
    expect(ev.body.advanced).toMatchObject({ to: 'integration' });
    expect(await c.types(creator, i.id)).toEqual(['GENERATE_DOCUMENTATION', 'VIEW_ARTIFACTS']);
    expect(await c.types(admin, i.id)).toEqual(['APPROVE_GUARD', 'GENERATE_DOCUMENTATION', 'VIEW_ARTIFACTS']);

    // completed: only the artifacts remain to view.
    expect(
      (await c.call(admin, 'POST', `/api/protocol/instances/${i.id}/approvals`, {})).body.instance.state,
    ).toBe('completed');
    expect(await c.types(creator, i.id)).toEqual(['VIEW_ARTIFACTS']);
    const gone = await c.history(creator, `instance/${i.id}`);
    expect(byType(gone, 'GENERATE_DOCUMENTATION')).toMatchObject([
      { status: 'expired', expiredReason: 'trigger' },
    ]);
  });

  it('a channel: intent, then the chosen protocol, then its instance', async () => {
    const channel = 'chan-flow-1';
    // No message: nothing to analyse. Offline, a message without a keyword means no intent, and
    // nothing is stored.
    expect(await c.types(creator, channel)).toEqual([]);
    expect(await c.types(creator, channel, 'hello there, how are you?')).toEqual([]);
    expect(await c.history(creator, channel)).toEqual([]);
    // Keywords (offline): a bug.
    const bug = await c.list(creator, channel, 'The checkout page crashes on submit');
    expect(bug.suggestions).toMatchObject([
      {
        type: 'SELECT_PROTOCOL',
        priority: 40,
        confidence: 0.7,
        context: { contextId: channel, channelId: channel },
        metadata: { intent: 'bug', protocolId: 'triage_support_v1' },
        actions: [
          { type: 'EXECUTE', params: { protocolId: 'triage_support_v1' } },
          { type: 'ASK_QUESTIONS', safety: 'REQUIRES_CONFIRMATION' },
          { type: 'CANCEL' },
        ],
      },
    ]);
    // Kept while no newer message is analysed; gone when one shows no intent.
    expect(await c.types(creator, channel)).toEqual(['SELECT_PROTOCOL']);
    expect(await c.types(creator, channel, 'thanks, see you')).toEqual([]);
    // The channel's workflow protocol (its chat-platform configuration) means a workflow to start.
    const configured = 'chan-configured-1';
    expect(
      (
        await c.call(admin, 'POST', '/api/chat-platform/channel/config', {
          channelId: configured,
          protocolId: 'observer_onboarding_v1',
        })
      ).status,
    ).toBe(200);
    expect((await c.list(creator, configured)).suggestions).toMatchObject([
      {
        type: 'CREATE_STATE_MACHINE',
        priority: 50,
        actions: [{ type: 'EXECUTE', params: { machineId: 'documentation_flow_v1' } }, { type: 'CANCEL' }],
      },
    ]);
    // A channel's newest unarchived instance of the caller's is what the channel means.
    const i = await c.instance(creator, { machineId: 'triage_flow_v1', channelId: configured });
    const inChannel = await c.list(creator, configured);
    expect(inChannel.suggestions.map((s: any) => s.type)).toEqual(['BREAK_DOWN_TASKS', 'TRANSITION_STATE']);
    expect(inChannel.suggestions[0].context).toMatchObject({
      instanceId: i.id,
      channelId: configured,
      state: 'triage_intake',
    });
    const created = byType(await c.history(creator, configured), 'CREATE_STATE_MACHINE');
    expect(created).toMatchObject([{ status: 'expired', expiredReason: 'trigger' }]);
  });
});

describe('order, cap and ttl', () => {
  it('orders by priority, confidence and newest timestamp, and returns ten', async () => {
    const i = await c.instance(creator, { machineId: 'documentation_flow_v1' });
    await c.readyArtifacts(i.id, 6, 'Early');
    await c.list(creator, i.id);
    clock.advance(1000);
    await c.readyArtifacts(i.id, 6, 'Late');
    const all = await c.list(creator, i.id);
    // 15 active: BREAK_DOWN_TASKS 80, 12 × REVIEW_ARTIFACT 75, TRANSITION_STATE 60, VIEW_ARTIFACTS 30.
    expect(all.suggestions).toHaveLength(10);
    expect(all.suggestions.map((s: any) => s.type)).toEqual([
      'BREAK_DOWN_TASKS',
      ...Array(9).fill('REVIEW_ARTIFACT'),
    ]);
    const reviews = all.suggestions.slice(1);
    // The later ones first (newer timestamp), then the earlier.
    expect(reviews.slice(0, 6).every((s: any) => s.message.includes('Late'))).toBe(true);
    expect(reviews.slice(6).every((s: any) => s.message.includes('Early'))).toBe(true);
    for (let k = 1; k < reviews.length; k++)
      expect(reviews[k - 1].timestamp >= reviews[k].timestamp).toBe(true);
    // Priority first: an early one raised to 100 leads.
    const early = reviews[6];
    expect(
      (await c.ok(creator, 'PUT', `/api/suggestions/${i.id}/${early.id}`, { priority: 100 })).priority,
    ).toBe(100);
    const raised = await c.list(creator, i.id);
    expect(raised.suggestions[0].id).toBe(early.id);
    expect(raised.suggestions).toHaveLength(10);
  });

  it('expires suggestions once their ttl has elapsed on the service clock, and makes new ones', async () => {
    const i = await c.instance(creator, { machineId: 'documentation_flow_v1' });
    const before = await c.list(creator, i.id);
    clock.advance(59 * MINUTE);
    expect((await c.list(creator, i.id)).suggestions.map((s: any) => s.id)).toEqual(
      before.suggestions.map((s: any) => s.id),
    );
    clock.advance(MINUTE);
    const after = await c.list(creator, i.id);
    expect(after.suggestions.map((s: any) => s.type)).toEqual(['BREAK_DOWN_TASKS', 'TRANSITION_STATE']);
    for (const s of after.suggestions) expect(before.suggestions.map((b: any) => b.id)).not.toContain(s.id);
    expect(after.suggestions[0].timestamp).toBe(clock.now().toISOString());
    const history = await c.history(creator, `instance/${i.id}`);
    expect(
      history
        .filter((s: any) => s.expiredReason === 'ttl')
        .map((s: any) => s.id)
        .sort(),
    ).toEqual(before.suggestions.map((s: any) => s.id).sort());
  });
});

describe('storage', () => {
  it('keeps one open suggestion per key: a racing pass inserts nothing twice', async () => {
    const row = {
      userId: creator.id,
      contextId: 'chan-race-1',
      key: 'SELECT_PROTOCOL|triage_support_v1|-',
      type: 'SELECT_PROTOCOL' as const,
      message: 'm',
      confidence: 0.7,
      priority: 40,
      metadata: {},
      actions: [],
      ttl: 3600,
      instanceId: null,
      channelId: 'chan-race-1',
      protocolId: null,
      state: null,
      stateVisit: null,
      createdAt: clock.now(),
    };
    const [first] = await repo.insertSuggestions(t.deps.db, [row]);
    expect(first).toMatchObject({ status: 'active' });
    expect(await repo.insertSuggestions(t.deps.db, [row])).toEqual([]);
    // Once it is no longer open, the key may be stored again (the pass decides whether it should).
    await repo.expire(t.deps.db, [first!.id], 'trigger');
    expect(await repo.insertSuggestions(t.deps.db, [row])).toHaveLength(1);
  });
});

describe('the pass after an instance write', () => {
  it("runs for the creator without a GET, in the instance's context and its channel", async () => {
    const u = await createUser(t);
    const i = await c.instance(u, { machineId: 'documentation_flow_v1', channelId: 'chan-job-1' });
    // The jobs of the earlier tests' writes may still be queued before these.
    const wait = { timeoutMs: 60_000, intervalMs: 100 };
    await eventually(async () => {
      const types = (await c.history(u, `instance/${i.id}`)).map(
        (s: any) => `${s.context.contextId}:${s.type}`,
      );
      expect(types.sort()).toEqual(
        [
          `${i.id}:BREAK_DOWN_TASKS`,
          `${i.id}:TRANSITION_STATE`,
          'chan-job-1:BREAK_DOWN_TASKS',
          'chan-job-1:TRANSITION_STATE',
        ].sort(),
      );
    }, wait);
    // The next write's pass follows the instance.
    await c.ok(u, 'POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' });
    await eventually(async () => {
      // The channel's history holds both contexts' (the instance's channel is theirs too).
      const history = await c.history(u, 'chan-job-1');
      expect(history.filter((s: any) => s.status === 'active')).toEqual([]);
      expect(history.filter((s: any) => s.expiredReason === 'trigger')).toHaveLength(4);
    }, wait);
  }, 120_000);

  it('passes in the contexts the creator bound to the instance, with their config', async () => {
    const u = await createUser(t);
    const i = await c.instance(u, { machineId: 'documentation_flow_v1' });
    const { configs } = t.deps.services.suggestions;
    expect(await configs.withBoundContexts(u.id, i.id)).toEqual({ config: DEFAULT_CONFIG, bound: [] });
    await settings.upsertContext(t.deps.db, u.id, 'chan-bound-1', { instance_id: i.id });
    await settings.upsertContext(t.deps.db, other.id, 'chan-bound-2', { instance_id: i.id });
    await c.config(u, { neverAutoExecute: ['VIEW'], undoWindowMinutes: 7 });
    expect(await configs.withBoundContexts(u.id, i.id)).toEqual({
      config: await configs.get(u.id),
      bound: ['chan-bound-1'],
    });
    expect((await configs.get(u.id)).undoWindowMinutes).toBe(7);
    // The job passes there too (the instance's own pass, then the bound context's, which means it).
    await t.deps.services.suggestions.generateForInstance(i.id);
    const bound = (await c.history(u, `instance/${i.id}`)).filter(
      (s: any) => s.context.contextId === 'chan-bound-1' && s.status === 'active',
    );
    expect(bound.map((s: any) => s.type).sort()).toEqual(['BREAK_DOWN_TASKS', 'TRANSITION_STATE']);
  });

  it('passes the instance again as it is after moving it by itself', async () => {
    const u = await createUser(t);
    await c.config(u, { autoTransitionOnGuard: false, autoRunOrchestrator: false });
    const { suggestions } = t.deps.services;
    // The instance's own pass (its job) suggests the free exit without taking it; then, allowed
    // to, this test's pass takes it and passes the instance again as it is in triage.
    const i = await c.instance(u, { machineId: 'documentation_flow_v1' });
    await t.deps.jobs.drain(15_000);
    expect(await c.types(u, i.id)).toEqual(['BREAK_DOWN_TASKS', 'TRANSITION_STATE']);
    await c.config(u, { autoTransitionOnGuard: true });
    await suggestions.generateForInstance(i.id);
    expect(await c.ok(u, 'GET', `/api/protocol/instances/${i.id}`)).toMatchObject({
      state: 'triage',
      stateVisit: 2,
    });
    // The free exit taken, then intake's suggestion expired by the pass that saw triage.
    const history = await c.history(u, `instance/${i.id}`);
    expect(
      history.map((s: any) => [s.type, s.status, s.expiredReason, s.autoExecuted, s.context.state]).sort(),
    ).toEqual([
      ['BREAK_DOWN_TASKS', 'expired', 'trigger', false, 'intake'],
      ['TRANSITION_STATE', 'executed', null, true, 'intake'],
    ]);
  });

  it('passes nothing for an instance that is gone, or whose creator is', async () => {
    const { suggestions, users } = t.deps.services;
    await expect(suggestions.generateForInstance(crypto.randomUUID())).resolves.toBeUndefined();
    const u = await createUser(t);
    const i = await c.instance(u, { machineId: 'documentation_flow_v1' });
    await users.remove(u.id);
    await expect(suggestions.generateForInstance(i.id)).resolves.toBeUndefined();
    expect(await repo.history(t.deps.db, { instanceId: i.id, limit: 10 })).toEqual([]);
  });
});
