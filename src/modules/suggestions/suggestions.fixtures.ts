/* eslint-disable @typescript-eslint/no-explicit-any -- a test helper: it reads untyped JSON bodies, as the tests do */
// Helpers shared by the suggestion tests: calls as a given user, a clock moved by hand, and
// artifacts written through the orchestrator's own seams (the workflows service); and the app,
// clock and users of the endpoint tests (suggestions.test.ts, suggestions.answers.test.ts), which
// such a file makes by calling `useSuggestionsApp()` once.
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

/** The suggestions' clock, moved by the test instead of waiting. */
export function manualClock(start = '2026-03-01T10:00:00.000Z') {
  let now = new Date(start);
  return {
    now: () => now,
    advance(ms: number) {
      now = new Date(now.getTime() + ms);
    },
  };
}

export const MINUTE = 60_000;

export function suggestionsClient(t: TestApp) {
  const call = <T = any>(user: TestUser, method: string, path: string, body?: unknown) =>
    t.api<T>(method, path, { token: user.accessToken, ...(body !== undefined ? { body } : {}) });
  const ok = async (user: TestUser, method: string, path: string, body?: unknown, status = 200) => {
    const r = await call(user, method, path, body);
    expect(r.status, r.text).toBe(status);
    return r.body;
  };
  const c = {
    call,
    ok,
    /** GET a context's suggestions (a pass); `message` for intent analysis. */
    list: (user: TestUser, contextId: string, message?: string) =>
      ok(
        user,
        'GET',
        `/api/suggestions/${encodeURIComponent(contextId)}${message ? `?message=${encodeURIComponent(message)}` : ''}`,
      ),
    async types(user: TestUser, contextId: string, message?: string): Promise<string[]> {
      return (await c.list(user, contextId, message)).suggestions.map((s: any) => s.type);
    },
    /** The active suggestion of this type in the context. */
    async find(user: TestUser, contextId: string, type: string) {
      const found = (await c.list(user, contextId)).suggestions.find((s: any) => s.type === type);
      expect(found, `${type} in ${contextId}`).toBeDefined();
      return found;
    },
    execute: (user: TestUser, contextId: string, body: Record<string, unknown>) =>
      call(user, 'POST', `/api/suggestions/${encodeURIComponent(contextId)}/execute`, body),
    config: (user: TestUser, body: Record<string, unknown>) =>
      ok(user, 'PUT', '/api/suggestions/config', body),
    instance: (user: TestUser, body: Record<string, unknown>) =>
      ok(user, 'POST', '/api/protocol/instances', body, 201),
    history: async (user: TestUser, path: string) =>
      (await ok(user, 'GET', `/api/suggestions/history/${path}`)).history,
    /** `n` ready artifacts pending review, written as the orchestrator writes them. */
    async readyArtifacts(instanceId: string, n: number, summary = 'Artifact') {
      const tasks = t.deps.services.workflowTasks;
      const out = [];
      for (let i = 0; i < n; i++) {
        const a = await tasks.createDraftArtifact(t.deps.db, {
          instanceId,
          taskId: null,
          personaId: null,
          summary: `${summary} ${i + 1}`,
        });
        out.push(await tasks.markArtifactReady(t.deps.db, a.id, `content ${i + 1}`));
      }
      return out;
    },
  };
  return c;
}

export let clock: ReturnType<typeof manualClock>;
export let t: TestApp;
export let admin: TestUser;
export let creator: TestUser;
export let other: TestUser;
export let c: ReturnType<typeof suggestionsClient>;

/** The app on a clock of its own, an admin and two public users, made before a file's tests and
 * closed after; the bindings above are set before its tests run. */
export function useSuggestionsApp(): void {
  beforeAll(async () => {
    clock = manualClock();
    t = await createTestApp({}, { clock: clock.now });
    admin = await createUser(t, 'cso', { name: 'Admin' });
    creator = await createUser(t, 'public', { name: 'Creator' });
    other = await createUser(t, 'public', { name: 'Other' });
    c = suggestionsClient(t);
    // VIEW runs by itself by default; these tests watch VIEW_ARTIFACTS come and go instead. No run
    // starts on entering execution (its tasks and artifacts would change the suggestions meanwhile).
    await c.config(creator, { neverAutoExecute: ['VIEW'], autoRunOrchestrator: false });
    await c.config(admin, { neverAutoExecute: ['VIEW'] });
  });
  afterAll(async () => {
    await t.close();
  });
}
