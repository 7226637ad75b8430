// The chat-platform commands over HTTP on the real app and database (contract "Chat-platform
// commands"): the nine commands driving an instance with an admin's token and with a key acting as
// a linked platform user; the command name and argument coercion; the refusals for unknown
// commands, bad arguments, a bad envelope and the operation's own problems, each with `text`; and
// text kept within the chat's limit. Who may call and the admin routes that link platform users
// are in chat-platform.commands.access.test.ts; the app and helpers in
// chat-platform.commands.fixtures.ts.
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../test/harness.js';
import {
  ADMIN_PLATFORM_ID,
  admin,
  command,
  commandKey,
  createInstance,
  npcId,
  ok,
  refused,
  sameProblem,
  t,
  taskWithArtifact,
  useCommandsApp,
  type Auth,
} from './chat-platform.commands.fixtures.js';

useCommandsApp();

describe.each([
  ['an admin token', (): Auth => ({ token: admin.accessToken })],
  ['a key acting as a linked admin', (): Auth => ({ apiKey: commandKey, platformUserId: ADMIN_PLATFORM_ID })],
])('the nine commands with %s', (_label, auth) => {
  it('drive an instance from intake to integration, with its tasks, artifacts and a run', async () => {
    const i = await createInstance(admin);

    const shown = ok(await command(auth(), '/observer-instance', { instance_id: i.id }), 'observer-instance');
    expect(shown.result).toMatchObject({ id: i.id, state: 'intake', version: 1 });
    expect(shown.text).toMatch(/"Write the guide" \(documentation_flow_v1\) is in \*\*intake\*\*/);
    expect(shown.text).toMatch(/Next: triage/);

    const moved = ok(
      await command(auth(), '/observer-transition', { instance_id: i.id, target_state: 'triage' }),
      'observer-transition',
    );
    expect(moved.result).toMatchObject({ state: 'triage', version: 2 });
    expect(moved.text).toMatch(/Moved to \*\*triage\*\*/);
    expect(moved.text).toMatch(/execution \(needs the observer's approval\)/);

    const approved = ok(
      await command(auth(), '/observer-approve', { instance_id: i.id }),
      'observer-approve',
    );
    expect(approved.result.approval).toMatchObject({
      instanceId: i.id,
      state: 'triage',
      approvedByUserId: admin.id,
    });
    expect(approved.result.advanced).toEqual({ from: 'triage', to: 'execution', guard: 'observerApproval' });
    expect(approved.result.instance.state).toBe('execution');
    expect(approved.text).toMatch(/Advanced automatically: triage → execution/);

    const { task, artifact } = await taskWithArtifact(i.id);
    const assigned = ok(
      await command(auth(), '/observer-assign', {
        task_id: task.id,
        persona_id: String(npcId),
        status: 'in_progress',
      }),
      'observer-assign',
    );
    expect(assigned.result).toMatchObject({ id: task.id, assignedPersonaId: npcId, status: 'in_progress' });
    expect(assigned.text).toBe(`Task "Write it" is in_progress, assigned to persona ${npcId}.`);

    const listed = ok(
      await command(auth(), '/observer-artifacts', { instance_id: i.id }),
      'observer-artifacts',
    );
    expect(listed.result.artifacts.map((a: any) => [a.id, a.content])).toEqual([[artifact.id, undefined]]);
    expect(listed.text).toMatch(/^1 artifact\(s\):\n- The guide \[ready, pending\]/);

    const viewed = ok(
      await command(auth(), '/observer-artifact-view', { artifact_id: artifact.id }),
      'observer-artifact-view',
    );
    expect(viewed.result).toMatchObject({ id: artifact.id, content: '# Guide\n\nThe guide.' });
    expect(viewed.text).toMatch(/The guide\.$/);

    const reviewed = ok(
      await command(auth(), '/observer-artifact-review', { artifact_id: artifact.id, approve: 'true' }),
      'observer-artifact-review',
    );
    expect(reviewed.result.artifact).toMatchObject({ id: artifact.id, reviewStatus: 'approved' });
    // The last approving review records evidence, which takes execution's guarded exit.
    expect(reviewed.result.advanced).toEqual({
      from: 'execution',
      to: 'integration',
      guard: 'testsOrDemoAttached',
    });

    const evidence = ok(
      await command(auth(), '/observer-evidence', {
        instance_id: i.id,
        description: 'The demo',
        proofUrl: 'https://demo.example/guide',
      }),
      'observer-evidence',
    );
    expect(evidence.result.evidence).toMatchObject({
      eventType: 'verification_evidence',
      metadata: { description: 'The demo', proofUrl: 'https://demo.example/guide', source: 'chat_platform' },
    });
    expect(evidence.result.advanced).toBeNull();
    expect(evidence.result.instance.state).toBe('integration');

    const run = ok(
      await command(auth(), '/observer-orchestrate', { instance_id: i.id }),
      'observer-orchestrate',
    );
    expect(run.result).toMatchObject({ instanceId: i.id, trigger: 'command' });
    expect(run.text).toMatch(/^Orchestrator run .* \(trigger command;/);
    // The run is the orchestrator's like any other; wait for it so nothing runs past the test.
    await eventually(async () => {
      const r = await t.api('GET', `/api/protocol/runs/${run.result.id}`, { token: admin.accessToken });
      expect(r.body.status).toBe('completed');
    });
  });
});

describe('commands and arguments', () => {
  const asAdmin = () => ({ token: admin.accessToken });

  it('takes the name with or without `/`, in any case, and coerces "3" and "true"', async () => {
    const i = await createInstance(admin);
    ok(await command(asAdmin(), 'observer-instance', { instance_id: i.id }), 'observer-instance');
    ok(await command(asAdmin(), ' /Observer-Instance ', { instance_id: i.id }), 'observer-instance');
    await command(asAdmin(), 'observer-transition', { instance_id: i.id, target_state: 'triage' });
    await command(asAdmin(), 'observer-approve', { instance_id: i.id });
    const { task, artifact } = await taskWithArtifact(i.id);
    const assigned = ok(
      await command(asAdmin(), 'observer-assign', { task_id: task.id, persona_id: ` ${npcId} ` }),
      'observer-assign',
    );
    expect(assigned.result).toMatchObject({ assignedPersonaId: npcId, status: 'pending' });
    const rejected = ok(
      await command(asAdmin(), 'observer-artifact-review', { artifact_id: artifact.id, approve: 'FALSE' }),
      'observer-artifact-review',
    );
    expect(rejected.result.artifact.reviewStatus).toBe('rejected');
    expect(rejected.result.advanced).toBeNull();
    // JSON numbers and booleans are taken as they are, a number for a string argument as its text.
    const { artifact: second } = await taskWithArtifact(i.id);
    const approved = ok(
      await command(asAdmin(), 'observer-artifact-review', { artifact_id: second.id, approve: true }),
      'observer-artifact-review',
    );
    expect(approved.result.artifact.reviewStatus).toBe('approved');
    const number = refused(
      await command(asAdmin(), 'observer-instance', { instance_id: 42 }),
      400,
      'validation_failed',
    );
    expect(number.errors).toEqual([{ path: 'args.instance_id', message: expect.stringMatching(/UUID/i) }]);
  });

  it('answers 400 with the command list for an unknown command', async () => {
    const r = refused(await command(asAdmin(), '/observer-nope', {}), 400, 'validation_failed');
    expect(r.errors).toEqual([{ path: 'command', message: 'unknown command /observer-nope' }]);
    expect(r.text).toMatch(/\/observer-instance, \/observer-transition/);
  });

  it('answers 400 naming each bad argument, with the usage', async () => {
    const missing = refused(await command(asAdmin(), 'observer-transition', {}), 400, 'validation_failed');
    expect(missing.errors).toEqual([
      { path: 'args.instance_id', message: 'required' },
      { path: 'args.target_state', message: 'required' },
    ]);
    expect(missing.text).toMatch(/Usage: \/observer-transition instance_id:<string> target_state:<string>$/);
    const wrong = refused(
      await command(asAdmin(), 'observer-assign', {
        task_id: 'not-a-uuid',
        persona_id: 'three',
        status: 'done',
        colour: 'red',
      }),
      400,
      'validation_failed',
    );
    expect(wrong.errors).toEqual([
      {
        path: 'args.colour',
        message: expect.stringMatching(/^unknown argument; \/observer-assign takes task_id/),
      },
      { path: 'args.persona_id', message: 'must be an integer' },
      { path: 'args.status', message: 'must be one of pending, in_progress, completed, blocked' },
    ]);
    // The route's own schemas check what coercion lets through, named as the command's arguments.
    const i = await createInstance(admin);
    const badUrl = refused(
      await command(asAdmin(), 'observer-evidence', {
        instance_id: i.id,
        description: 'x',
        proofUrl: 'ftp://files.example/x',
      }),
      400,
      'validation_failed',
    );
    expect(badUrl.errors).toEqual([{ path: 'args.proofUrl', message: 'must be an http(s) URL' }]);
    expect(badUrl.text).toMatch(/- args\.proofUrl: must be an http\(s\) URL/);
    const badId = refused(
      await command(asAdmin(), 'observer-assign', { task_id: 'x', persona_id: 1 }),
      400,
      'validation_failed',
    );
    expect(badId.errors.map((e: any) => e.path)).toEqual(['args.task_id']);
    const badBool = refused(
      await command(asAdmin(), 'observer-artifact-review', { artifact_id: i.id, approve: 'maybe' }),
      400,
      'validation_failed',
    );
    expect(badBool.errors).toEqual([{ path: 'args.approve', message: 'must be true or false' }]);
  });

  it('answers a bad envelope with the problem and text', async () => {
    const r = await t.api('POST', '/api/chat-platform/commands', {
      token: admin.accessToken,
      body: { command: 'observer-instance', args: { instance_id: { nested: true } } },
    });
    const body = refused(r, 400, 'validation_failed');
    expect(body.errors.map((e: any) => e.path).sort()).toEqual(['body.args.instance_id', 'body.channelId']);
  });

  it('passes a refused operation through: its 409 problem, plus text saying what to record', async () => {
    const i = await createInstance(admin);
    await command(asAdmin(), 'observer-transition', { instance_id: i.id, target_state: 'triage' });
    const guard = await command(asAdmin(), 'observer-transition', {
      instance_id: i.id,
      target_state: 'execution',
    });
    const problem = refused(guard, 409, 'guard_not_satisfied');
    expect(problem).toMatchObject({ guard: 'observerApproval', missing: ['approval'] });
    expect(problem.text).toBe(`Guard not satisfied: ${problem.detail}`);
    sameProblem(
      guard,
      await t.api('POST', `/api/protocol/instances/${i.id}/transition`, {
        token: admin.accessToken,
        body: { targetState: 'execution' },
      }),
    );
    const invalid = refused(
      await command(asAdmin(), 'observer-transition', { instance_id: i.id, target_state: 'completed' }),
      409,
      'invalid_transition',
    );
    expect(invalid.allowed).toEqual(['execution']);
    expect(invalid.text).toMatch(/\nAllowed: execution$/);
  });

  it('keeps text within 2000 characters, whatever the artifact holds', async () => {
    const i = await createInstance(admin);
    const { artifact } = await taskWithArtifact(i.id, 'word '.repeat(5000));
    const r = ok(
      await command(asAdmin(), 'observer-artifact-view', { artifact_id: artifact.id }),
      'observer-artifact-view',
    );
    expect(r.result.content).toHaveLength(25_000);
    expect(r.text.endsWith('…')).toBe(true);
  });
});
