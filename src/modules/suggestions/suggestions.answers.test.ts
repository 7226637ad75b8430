// What a user does with suggestions, on a real server and database (contract "Suggestions"):
// clear one or all, accept or decline once (and the moves the machine lacks), the auto-execution
// config, and who sees what: another user's context, admins reading history, bad input and
// callers without a token. The trigger table, ordering, ttl and the pass after an instance write
// are in suggestions.test.ts; the app and users come from `useSuggestionsApp()`
// (suggestions.fixtures.ts).
import { describe, expect, it } from 'vitest';
import { expectProblem } from '../../../test/expect-problem.js';
import { createUser } from '../../../test/harness.js';
import { admin, c, clock, creator, other, t, useSuggestionsApp } from './suggestions.fixtures.js';

useSuggestionsApp();

describe('clear and answers', () => {
  it('clears one or all (expired, cleared); a cleared key comes back only once the instance moves on', async () => {
    const i = await c.instance(creator, { machineId: 'documentation_flow_v1' });
    const [breakDown, transition] = (await c.list(creator, i.id)).suggestions;
    expect(
      await c.ok(creator, 'POST', `/api/suggestions/${i.id}/clear`, { suggestionId: breakDown.id }),
    ).toEqual({ cleared: 1 });
    expect(
      await c.ok(creator, 'POST', `/api/suggestions/${i.id}/clear`, { suggestionId: breakDown.id }),
    ).toEqual({ cleared: 0 });
    expect(await c.types(creator, i.id)).toEqual(['TRANSITION_STATE']);
    expect(await c.ok(creator, 'POST', `/api/suggestions/${i.id}/clear`, {})).toEqual({ cleared: 1 });
    expect(await c.types(creator, i.id)).toEqual([]);
    const history = await c.history(creator, `instance/${i.id}`);
    expect(history.find((s: any) => s.id === transition.id)).toMatchObject({
      status: 'expired',
      expiredReason: 'cleared',
    });
    // In execution: evidence is suggested; cleared, it stays away while the visit lasts.
    await c.ok(creator, 'POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' });
    await c.ok(admin, 'POST', `/api/protocol/instances/${i.id}/approvals`, {}, 201);
    const [evidence] = (await c.list(creator, i.id)).suggestions;
    expect(evidence.type).toBe('ATTACH_EVIDENCE');
    expect(await c.ok(creator, 'POST', `/api/suggestions/${i.id}/clear`)).toEqual({ cleared: 1 });
    expect(await c.types(creator, i.id)).toEqual([]);
    // Rework and back: a new visit of execution, so the key is new and the suggestion returns.
    await c.ok(creator, 'POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' });
    await c.ok(admin, 'POST', `/api/protocol/instances/${i.id}/approvals`, {}, 201);
    const [again] = (await c.list(creator, i.id)).suggestions;
    expect(again).toMatchObject({ type: 'ATTACH_EVIDENCE', status: 'active' });
    expect(again.id).not.toBe(evidence.id);
    expectProblem(
      await c.call(creator, 'POST', `/api/suggestions/${i.id}/clear`, { suggestionId: crypto.randomUUID() }),
      404,
      'not_found',
    );
    expectProblem(
      await c.call(creator, 'POST', `/api/suggestions/${i.id}/clear`, { suggestionId: 'nope' }),
      400,
      'validation_failed',
    );
  });

  it('accepts or declines an active suggestion once, with its response time; refuses the moves the machine lacks', async () => {
    const i = await c.instance(creator, { machineId: 'documentation_flow_v1' });
    const [breakDown, transition] = (await c.list(creator, i.id)).suggestions;
    clock.advance(5000);
    const accepted = await c.ok(creator, 'PUT', `/api/suggestions/${i.id}/${breakDown.id}`, {
      status: 'accepted',
      metadata: { note: 'later' },
    });
    expect(accepted).toMatchObject({
      status: 'accepted',
      responseTimeMs: 5000,
      metadata: { source: 'trigger', note: 'later' },
    });
    // Accepted: no longer listed, not made again, still open to the same answer.
    expect(await c.types(creator, i.id)).toEqual(['TRANSITION_STATE']);
    expect(
      (await c.ok(creator, 'PUT', `/api/suggestions/${i.id}/${breakDown.id}`, { status: 'accepted' }))
        .responseTimeMs,
    ).toBe(5000);
    const refused = expectProblem(
      await c.call(creator, 'PUT', `/api/suggestions/${i.id}/${breakDown.id}`, { status: 'declined' }),
      409,
      'invalid_transition',
    );
    expect(refused).toMatchObject({ from: 'accepted', to: 'declined', allowed: [] });

    const declined = await c.ok(creator, 'PUT', `/api/suggestions/${i.id}/${transition.id}`, {
      status: 'declined',
    });
    expect(declined).toMatchObject({ status: 'declined', responseTimeMs: 5000 });
    expect(await c.types(creator, i.id)).toEqual([]);
    expectProblem(
      await c.call(creator, 'PUT', `/api/suggestions/${i.id}/${transition.id}`, { status: 'accepted' }),
      409,
      'invalid_transition',
    );
    expectProblem(
      await c.call(creator, 'PUT', `/api/suggestions/${i.id}/${transition.id}`, { priority: 10 }),
      409,
      'conflict',
    );
    // A declined suggestion is not executed either.
    expectProblem(await c.execute(creator, i.id, { suggestionId: transition.id }), 409, 'conflict');
    expectProblem(
      await c.call(creator, 'PUT', `/api/suggestions/${i.id}/${transition.id}`, { priority: 101 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.call(creator, 'PUT', `/api/suggestions/${i.id}/${transition.id}`, { status: 'executed' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.call(creator, 'PUT', `/api/suggestions/${i.id}/${crypto.randomUUID()}`, { status: 'declined' }),
      404,
      'not_found',
    );
  });
});

describe('config', () => {
  it('answers the defaults with each decision, merges changes, refuses unknown action types', async () => {
    const u = await createUser(t);
    expect(await c.ok(u, 'GET', '/api/suggestions/config')).toEqual({
      autoRunOrchestrator: true,
      autoTransitionOnGuard: false,
      autoSuggestNextStep: true,
      requireConfirmationFor: [],
      neverAutoExecute: [],
      undoWindowMinutes: 5,
      decisions: {
        EXECUTE: false,
        VIEW: true,
        APPROVE: false,
        CANCEL: false,
        SHOW_STATUS: true,
        ASK_QUESTIONS: false,
        TRANSITION: false,
        ATTACH_EVIDENCE: false,
        REVIEW: false,
      },
    });
    const changed = await c.config(u, {
      autoTransitionOnGuard: true,
      requireConfirmationFor: ['SHOW_STATUS', 'SHOW_STATUS'],
    });
    expect(changed).toMatchObject({
      autoTransitionOnGuard: true,
      requireConfirmationFor: ['SHOW_STATUS'],
      undoWindowMinutes: 5,
    });
    expect(changed.decisions).toMatchObject({ TRANSITION: true, SHOW_STATUS: false, VIEW: true });
    expect(await c.config(u, { undoWindowMinutes: 10 })).toMatchObject({
      autoTransitionOnGuard: true,
      undoWindowMinutes: 10,
    });
    const bad = expectProblem(
      await c.call(u, 'PUT', '/api/suggestions/config', { neverAutoExecute: ['LAUNCH'] }),
      400,
      'validation_failed',
    );
    expect(bad.errors[0].path).toMatch(/neverAutoExecute/);
    expectProblem(
      await c.call(u, 'PUT', '/api/suggestions/config', { undoWindowMinutes: -1 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.call(u, 'PUT', '/api/suggestions/config', { surprise: true }),
      400,
      'validation_failed',
    );
    expect((await c.ok(u, 'GET', '/api/suggestions/config')).undoWindowMinutes).toBe(10);
    expect((await t.api('GET', '/api/suggestions/config')).status).toBe(401);
  });

  it("the creator's autoRunOrchestrator rules the run started on entering execution", async () => {
    const u = await createUser(t);
    await c.config(u, { autoRunOrchestrator: false });
    const i = await c.instance(u, { machineId: 'documentation_flow_v1' });
    await c.ok(u, 'POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' });
    const approved = await c.ok(admin, 'POST', `/api/protocol/instances/${i.id}/approvals`, {}, 201);
    expect(approved.instance).toMatchObject({ state: 'execution', activeRunId: null });
  });
});

describe('who sees what', () => {
  it("never shows another user's context, suggestions or history", async () => {
    const i = await c.instance(creator, { machineId: 'documentation_flow_v1' });
    const [s] = (await c.list(creator, i.id)).suggestions;
    expectProblem(await c.call(other, 'GET', `/api/suggestions/${i.id}`), 404, 'not_found');
    expectProblem(await c.execute(other, i.id, { suggestionId: s.id }), 404, 'not_found');
    expectProblem(
      await c.call(other, 'PUT', `/api/suggestions/${i.id}/${s.id}`, { status: 'declined' }),
      404,
      'not_found',
    );
    expectProblem(
      await c.call(other, 'POST', `/api/suggestions/${i.id}/clear`, { suggestionId: s.id }),
      404,
      'not_found',
    );
    expectProblem(await c.call(other, 'GET', `/api/suggestions/history/instance/${i.id}`), 404, 'not_found');
    expectProblem(
      await c.call(other, 'GET', `/api/suggestions/history/user/${creator.id}`),
      403,
      'forbidden',
    );
    // A channel context is per user: the same id means the caller's own suggestions.
    const channel = 'chan-private-1';
    expect(await c.types(creator, channel, 'please fix the login error')).toEqual(['SELECT_PROTOCOL']);
    expect(await c.types(other, channel)).toEqual([]);
    expect(await c.history(other, channel)).toEqual([]);
    expect((await c.history(creator, channel)).map((h: any) => h.context.userId)).toEqual([creator.id]);
    // Admins read anyone's history.
    expect((await c.history(admin, channel)).map((h: any) => h.context.userId)).toEqual([creator.id]);
    const ownInstance = await c.history(creator, `instance/${i.id}`);
    expect(ownInstance.map((h: any) => h.id)).toContain(s.id);
    expect(await c.history(admin, `instance/${i.id}`)).toEqual(ownInstance);
    const ownUser = await c.history(creator, `user/${creator.id}`);
    expect(ownUser.map((h: any) => h.id)).toEqual(expect.arrayContaining(ownInstance.map((h: any) => h.id)));
    expect(await c.history(admin, `user/${creator.id}`)).toEqual(ownUser);
    // A conversation context is the caller's conversation only.
    const conv = await c.ok(creator, 'POST', '/api/conversations', { title: 'Mine' }, 201);
    expect(await c.types(creator, `conversation:${conv.id}`, 'implement the export feature')).toEqual([
      'SELECT_PROTOCOL',
    ]);
    expectProblem(await c.call(other, 'GET', `/api/suggestions/conversation:${conv.id}`), 404, 'not_found');
  });

  it('refuses bad input and callers without a token', async () => {
    expect((await t.api('GET', '/api/suggestions/chan-1')).status).toBe(401);
    expect(
      (
        await t.api('POST', '/api/suggestions/chan-1/execute', {
          body: { suggestionId: crypto.randomUUID() },
        })
      ).status,
    ).toBe(401);
    for (const bad of ['history', 'conversation:abc', 'conversation:0', 'a%20b'])
      expectProblem(await c.call(creator, 'GET', `/api/suggestions/${bad}`), 400, 'validation_failed');
    expectProblem(await c.call(creator, 'GET', `/api/suggestions/${'x'.repeat(101)}`), 414, 'uri_too_long');
    expectProblem(await c.call(creator, 'GET', `/api/suggestions/${crypto.randomUUID()}`), 404, 'not_found');
    expectProblem(await c.execute(creator, 'chan-1', {}), 400, 'validation_failed');
    expectProblem(
      await c.execute(creator, 'chan-1', { suggestionId: crypto.randomUUID(), extra: 1 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.execute(creator, 'chan-1', { suggestionId: crypto.randomUUID() }),
      404,
      'not_found',
    );
    expectProblem(
      await c.call(creator, 'GET', '/api/suggestions/history/user/abc'),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.call(creator, 'GET', '/api/suggestions/history/chan-1?limit=201'),
      400,
      'validation_failed',
    );
    expectProblem(
      await c.call(creator, 'GET', `/api/suggestions/chan-1?message=${'m'.repeat(4001)}`),
      400,
      'validation_failed',
    );
  });
});
