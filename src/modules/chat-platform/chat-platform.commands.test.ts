// The chat-platform commands over HTTP on the real app and database (contract "Chat-platform
// commands"): each command with an admin's token and with a key acting as a linked platform user,
// the refusals (who may call, unknown commands, bad arguments, the operation's own problems, each
// with `text`), coercion, and the admin routes that link platform users to accounts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestApp,
  createUser,
  eventually,
  type ApiResponse,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;
let user: TestUser;
let commandKey: string;
let syncKey: string;
let npcId: number;

const ADMIN_PLATFORM_ID = '100000000000000001';
const USER_PLATFORM_ID = '100000000000000002';

type Auth = { token: string } | { apiKey: string; platformUserId?: string };

beforeAll(async () => {
  t = await createTestApp();
  [admin, user] = await Promise.all([createUser(t, 'cso'), createUser(t, 'public')]);
  commandKey = (await t.deps.services.auth.createApiKey('bot', ['chat-platform:command'], null)).key;
  syncKey = (await t.deps.services.auth.createApiKey('sync', ['sync:read', 'sync:write'], null)).key;
  npcId = (await t.deps.services.characters.createNpc({ name: 'Writer', description: 'writes docs' })).id;
  // Entering execution starts no run here: the tests make their tasks and artifacts themselves.
  t.deps.services.workflows.usePorts({ autoRunOrchestrator: async () => false });
  expect((await link(ADMIN_PLATFORM_ID, admin.id)).status).toBe(201);
  expect((await link(USER_PLATFORM_ID, user.id)).status).toBe(201);
});
afterAll(async () => {
  t.deps.services.workflows.usePorts({ autoRunOrchestrator: undefined });
  await t.close();
});

const link = (platformUserId: string, userId: unknown, token = admin.accessToken) =>
  t.api('PUT', `/api/admin/chat-platform/users/${platformUserId}`, { token, body: { userId } });

function command(auth: Auth, command: string, args: Record<string, unknown> = {}) {
  const { platformUserId, ...credentials } = 'apiKey' in auth ? auth : { ...auth, platformUserId: undefined };
  return t.api('POST', '/api/chat-platform/commands', {
    ...credentials,
    body: {
      command,
      args,
      channelId: 'channel-1',
      guildId: 'guild-1',
      ...(platformUserId !== undefined ? { platformUserId } : {}),
    },
  });
}

/** A 200 answer: `{ command, text, result }`, text within the chat's limit. */
function ok(r: ApiResponse<any>, name: string) {
  expect(r.status, r.text).toBe(200);
  expect(Object.keys(r.body).sort()).toEqual(['command', 'result', 'text']);
  expect(r.body.command).toBe(name);
  expect(typeof r.body.text).toBe('string');
  expect(r.body.text.length).toBeGreaterThan(0);
  expect(r.body.text.length).toBeLessThanOrEqual(2000);
  return r.body;
}

/** A refusal: problem+json with this status and code, and a `text`. */
function refused(r: ApiResponse<any>, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(r.body.code).toBe(code);
  expect(typeof r.body.text).toBe('string');
  expect(r.body.text.length).toBeGreaterThan(0);
  expect(r.body.text.length).toBeLessThanOrEqual(2000);
  return r.body;
}

/** The same problem as a REST route's answer, plus `text`. */
function sameProblem(commandAnswer: ApiResponse<any>, rest: ApiResponse<any>) {
  expect(commandAnswer.status).toBe(rest.status);
  const { text: _text, ...problem } = commandAnswer.body;
  expect(problem).toEqual(rest.body);
}

async function createInstance(by: TestUser, title = 'Write the guide') {
  const r = await t.api('POST', '/api/protocol/instances', {
    token: by.accessToken,
    body: { machineId: 'documentation_flow_v1', channelId: 'channel-1', context: { title } },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string };
}

/** A task with a ready artifact, made through the orchestrator's seams. */
async function taskWithArtifact(instanceId: string, content = '# Guide\n\nThe guide.') {
  const w = t.deps.services.workflowTasks;
  const [task] = await w.createTasks(t.deps.db, instanceId, [{ title: 'Write it', specialty: 'docs' }]);
  const draft = await w.createDraftArtifact(t.deps.db, {
    instanceId,
    taskId: task!.id,
    personaId: null,
    summary: 'The guide',
  });
  const artifact = await w.markArtifactReady(t.deps.db, draft.id, content);
  return { task: task!, artifact };
}

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

describe('who may send commands', () => {
  it('answers 401 without credentials and 403 to a non-admin token, each with text', async () => {
    refused(
      await t.api('POST', '/api/chat-platform/commands', {
        body: { command: 'observer-instance', args: {}, channelId: 'c' },
      }),
      401,
      'unauthenticated',
    );
    const r = refused(await command({ token: user.accessToken }, 'observer-instance', {}), 403, 'forbidden');
    expect(r.text).toMatch(/^Forbidden: /);
  });

  it('refuses a key without the scope, a key naming no platform user, and an unlinked one', async () => {
    const noScope = refused(
      await command({ apiKey: syncKey, platformUserId: ADMIN_PLATFORM_ID }, 'observer-instance'),
      403,
      'forbidden',
    );
    expect(noScope.requiredScope).toBe('chat-platform:command');
    const unnamed = refused(await command({ apiKey: commandKey }, 'observer-instance'), 403, 'forbidden');
    expect(unnamed.detail).toMatch(/platformUserId/);
    const unlinked = refused(
      await command({ apiKey: commandKey, platformUserId: '199999999999999999' }, 'observer-instance'),
      403,
      'forbidden',
    );
    expect(unlinked.text).toMatch(/199999999999999999 is not linked/);
  });

  it('runs with the linked account’s own rights: 404 for an instance it does not take part in', async () => {
    const i = await createInstance(admin);
    const asUser = { apiKey: commandKey, platformUserId: USER_PLATFORM_ID };
    const hidden = await command(asUser, 'observer-instance', { instance_id: i.id });
    refused(hidden, 404, 'not_found');
    sameProblem(hidden, await t.api('GET', `/api/protocol/instances/${i.id}`, { token: user.accessToken }));
    // Its own instance: a participant, but not an approver (403, as the REST route says).
    const own = await createInstance(user, 'Mine');
    ok(await command(asUser, 'observer-instance', { instance_id: own.id }), 'observer-instance');
    const approve = await command(asUser, 'observer-approve', { instance_id: own.id });
    refused(approve, 403, 'forbidden');
    sameProblem(
      approve,
      await t.api('POST', `/api/protocol/instances/${own.id}/approvals`, {
        token: user.accessToken,
        body: {},
      }),
    );
  });

  it('follows the link as it is now: relinked, unlinked', async () => {
    const pid = '100000000000000003';
    const own = await createInstance(user, 'Relinked');
    expect((await link(pid, admin.id)).status).toBe(201);
    ok(
      await command({ apiKey: commandKey, platformUserId: pid }, 'observer-approve', { instance_id: own.id }),
      'observer-approve',
    );
    expect((await link(pid, user.id)).status).toBe(200);
    refused(
      await command({ apiKey: commandKey, platformUserId: pid }, 'observer-approve', { instance_id: own.id }),
      403,
      'forbidden',
    );
    expect(
      (await t.api('DELETE', `/api/admin/chat-platform/users/${pid}`, { token: admin.accessToken })).status,
    ).toBe(204);
    const gone = refused(
      await command({ apiKey: commandKey, platformUserId: pid }, 'observer-instance', {
        instance_id: own.id,
      }),
      403,
      'forbidden',
    );
    expect(gone.detail).toMatch(/not linked/);
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

describe('linked platform users (admin)', () => {
  const pid = '100000000000000009';
  const path = `/api/admin/chat-platform/users/${pid}`;

  it('needs an admin for every route', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { userId: user.id }],
      ['DELETE', undefined],
    ] as const) {
      expect((await t.api(method, path, { body })).status).toBe(401);
      const r = await t.api(method, path, { token: user.accessToken, body });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    expect((await t.api('GET', '/api/admin/chat-platform/users', { token: user.accessToken })).status).toBe(
      403,
    );
    expect((await t.api('GET', '/api/admin/chat-platform/users', { apiKey: commandKey })).status).toBe(401);
  });

  it('validates the link', async () => {
    for (const body of [{}, { userId: 'x' }, { userId: 0 }, { userId: user.id, extra: 1 }]) {
      const r = await t.api('PUT', path, { token: admin.accessToken, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const unknown = await link(pid, 987654321);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: 'userId', message: 'no user 987654321 exists' }]);
    // A platform user id is at most 100 characters: the router's limit for a path segment.
    expect((await link('x'.repeat(101), user.id)).status).toBe(414);
    expect((await link('x'.repeat(100), user.id)).status).toBe(201);
    expect((await t.api('GET', path, { token: admin.accessToken })).status).toBe(404);
  });

  it('links, relinks, reads, lists and unlinks', async () => {
    const created = await link(pid, user.id);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ platformUserId: pid, userId: user.id, linkedByUserId: admin.id });
    const relinked = await link(pid, admin.id);
    expect(relinked.status).toBe(200);
    expect(relinked.body).toMatchObject({
      platformUserId: pid,
      userId: admin.id,
      createdAt: created.body.createdAt,
    });
    expect((await t.api('GET', path, { token: admin.accessToken })).body).toEqual(relinked.body);

    const all = await t.api('GET', '/api/admin/chat-platform/users?limit=2', { token: admin.accessToken });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ limit: 2, offset: 0 });
    expect(all.body.total).toBeGreaterThanOrEqual(3);
    expect(all.body.links.map((l: any) => l.platformUserId)).toEqual([ADMIN_PLATFORM_ID, USER_PLATFORM_ID]);
    const mine = await t.api('GET', `/api/admin/chat-platform/users?userId=${admin.id}`, {
      token: admin.accessToken,
    });
    expect(mine.body.links.every((l: any) => l.userId === admin.id)).toBe(true);
    expect(mine.body.links.map((l: any) => l.platformUserId)).toContain(pid);

    expect((await t.api('DELETE', path, { token: admin.accessToken })).status).toBe(204);
    expect((await t.api('DELETE', path, { token: admin.accessToken })).status).toBe(404);
    expect((await t.api('GET', path, { token: admin.accessToken })).status).toBe(404);
  });

  it('are documented in the OpenAPI document with the command route', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/admin/chat-platform/users/{platformUserId}']).sort()).toEqual([
      'delete',
      'get',
      'put',
    ]);
    expect(doc.paths['/api/admin/chat-platform/users'].get).toBeDefined();
    expect(doc.paths['/api/chat-platform/commands'].post.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    // The new scope is one an API key may be given.
    expect(JSON.stringify(doc.paths['/api/admin/api-keys'])).toContain('chat-platform:command');
  });
});
