/* eslint-disable @typescript-eslint/no-explicit-any -- a test helper: it reads untyped JSON bodies, as the tests do */
// What the chat-platform command tests share (chat-platform.commands.test.ts,
// chat-platform.commands.access.test.ts): the real app and database with an admin and a public user
// each linked to a platform user, a key with the command scope and one without, an NPC to assign;
// and helpers to send a command, check an answer or a refusal (each with `text`), and make an
// instance or a task with a ready artifact. A test file calls `useCommandsApp()` once; the
// bindings below are set before its tests run.
import { afterAll, beforeAll, expect } from 'vitest';
import {
  createTestApp,
  createUser,
  type ApiResponse,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';

export let t: TestApp;
export let admin: TestUser;
export let user: TestUser;
export let commandKey: string;
export let syncKey: string;
export let npcId: number;

export const ADMIN_PLATFORM_ID = '100000000000000001';
export const USER_PLATFORM_ID = '100000000000000002';

export type Auth = { token: string } | { apiKey: string; platformUserId?: string };

/** The app, users, keys, NPC and links of one test file, made before its tests and closed after. */
export function useCommandsApp(): void {
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
}

export const link = (platformUserId: string, userId: unknown, token = admin.accessToken) =>
  t.api('PUT', `/api/admin/chat-platform/users/${platformUserId}`, { token, body: { userId } });

export function command(auth: Auth, command: string, args: Record<string, unknown> = {}) {
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
export function ok(r: ApiResponse<any>, name: string) {
  expect(r.status, r.text).toBe(200);
  expect(Object.keys(r.body).sort()).toEqual(['command', 'result', 'text']);
  expect(r.body.command).toBe(name);
  expect(typeof r.body.text).toBe('string');
  expect(r.body.text.length).toBeGreaterThan(0);
  expect(r.body.text.length).toBeLessThanOrEqual(2000);
  return r.body;
}

/** A refusal: problem+json with this status and code, and a `text`. */
export function refused(r: ApiResponse<any>, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(r.body.code).toBe(code);
  expect(typeof r.body.text).toBe('string');
  expect(r.body.text.length).toBeGreaterThan(0);
  expect(r.body.text.length).toBeLessThanOrEqual(2000);
  return r.body;
}

/** The same problem as a REST route's answer, plus `text`. */
export function sameProblem(commandAnswer: ApiResponse<any>, rest: ApiResponse<any>) {
  expect(commandAnswer.status).toBe(rest.status);
  const { text: _text, ...problem } = commandAnswer.body;
  expect(problem).toEqual(rest.body);
}

export async function createInstance(by: TestUser, title = 'Write the guide') {
  const r = await t.api('POST', '/api/protocol/instances', {
    token: by.accessToken,
    body: { machineId: 'documentation_flow_v1', channelId: 'channel-1', context: { title } },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string };
}

/** A task with a ready artifact, made through the orchestrator's seams. */
export async function taskWithArtifact(instanceId: string, content = '# Guide\n\nThe guide.') {
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
