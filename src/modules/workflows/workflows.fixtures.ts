/* eslint-disable @typescript-eslint/no-explicit-any -- a test helper: it reads untyped JSON bodies, as the tests do */
// Helpers shared by the workflow tests: calls as a given user, instance creation, and a listener
// on the root observer's /observer room; the problem+json assertion is the shared one.
import { expect } from 'vitest';
import type { TestApp, TestUser } from '../../../test/harness.js';

export function client(t: TestApp) {
  const call = <T = any>(user: TestUser, method: string, path: string, body?: unknown) =>
    t.api<T>(method, path, { token: user.accessToken, ...(body !== undefined ? { body } : {}) });
  return {
    call,
    async create(user: TestUser, body: Record<string, unknown>) {
      const r = await call(user, 'POST', '/api/protocol/instances', body);
      expect(r.status, r.text).toBe(201);
      return r.body;
    },
    transition: (user: TestUser, id: string, targetState: string, expectedVersion?: number) =>
      call(user, 'POST', `/api/protocol/instances/${id}/transition`, { targetState, expectedVersion }),
    approve: (user: TestUser, id: string, body: Record<string, unknown> = {}) =>
      call(user, 'POST', `/api/protocol/instances/${id}/approvals`, body),
    evidence: (user: TestUser, id: string, body: Record<string, unknown>) =>
      call(user, 'POST', `/api/protocol/instances/${id}/evidence`, body),
    get: (user: TestUser, id: string) => call(user, 'GET', `/api/protocol/instances/${id}`),
  };
}

export { expectProblem } from '../../../test/expect-problem.js';
