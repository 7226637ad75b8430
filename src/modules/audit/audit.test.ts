// The audit log on the real server (contract: "Admin zones"): rows for writes and refusals, none
// for health checks, metrics or plain reads; no secret in any stored row; filters and cursor
// paging; a failed write never fails the request; the retention sweep.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso');
  alice = await createUser(t, 'public');
});
afterAll(() => t.close());

const flush = () => t.deps.services.audit.flush();
const logs = (query: string, token = admin.accessToken) =>
  t.api('GET', `/api/admin/logs?${query}`, { token });

describe('audit log', () => {
  it('records writes and refusals with their actor and problem code; nothing for health, metrics or reads; no secret stored', async () => {
    const tag = `req-${Date.now()}`;
    const write = await t.api('POST', '/api/assistant/memory?token=query-secret-123', {
      token: alice.accessToken,
      body: { content: 'audit me', source: 'shared' },
      headers: { 'x-request-id': `${tag}-write` },
    });
    expect(write.status).toBe(201);
    const refused = await t.api('GET', '/api/admin/users', {
      token: alice.accessToken,
      headers: { 'x-request-id': `${tag}-403` },
    });
    expect(refused.status).toBe(403);
    const unauth = await t.api('GET', '/api/user/profile', {
      token: 'not-a-token',
      headers: { 'x-request-id': `${tag}-401` },
    });
    expect(unauth.status).toBe(401);
    const login = await t.api('POST', '/api/auth/login', {
      body: { email: alice.email, password: alice.password },
      headers: { 'x-request-id': `${tag}-login` },
    });
    expect(login.status).toBe(200);
    const refresh = await t.api('POST', '/api/auth/refresh', {
      body: { refreshToken: login.body.refreshToken },
      headers: { 'x-request-id': `${tag}-refresh` },
    });
    expect(refresh.status).toBe(200);
    for (const path of ['/api/health', '/api/admin/health', '/metrics', '/api/user/profile'])
      await t.api('GET', path, { token: admin.accessToken, headers: { 'x-request-id': `${tag}-read` } });
    await flush();

    const rows = (
      await sql<Record<string, unknown>>`select * from audit_logs where request_id like ${`${tag}%`}`.execute(
        t.deps.db,
      )
    ).rows;
    const byId = Object.fromEntries(rows.map((r) => [r.request_id, r]));
    expect(Object.keys(byId).sort()).toEqual(
      [`${tag}-401`, `${tag}-403`, `${tag}-login`, `${tag}-refresh`, `${tag}-write`].sort(),
    );
    expect(byId[`${tag}-write`]).toMatchObject({
      method: 'POST',
      path: '/api/assistant/memory',
      route: '/api/assistant/memory',
      status: 201,
      problem_code: null,
      actor_kind: 'user',
      actor_user_id: alice.id,
      ip: '127.0.0.1',
    });
    expect(byId[`${tag}-403`]).toMatchObject({
      status: 403,
      problem_code: 'forbidden',
      actor_user_id: alice.id,
    });
    expect(byId[`${tag}-401`]).toMatchObject({
      status: 401,
      problem_code: 'unauthenticated',
      actor_kind: 'anonymous',
    });
    expect(byId[`${tag}-login`]).toMatchObject({ status: 200, actor_kind: 'anonymous' });

    // No secret anywhere in the table: tokens, passwords, the query string.
    const dump = JSON.stringify((await sql`select * from audit_logs`.execute(t.deps.db)).rows);
    for (const secret of [
      alice.accessToken,
      admin.accessToken,
      alice.refreshToken,
      alice.password,
      login.body.accessToken,
      login.body.refreshToken,
      refresh.body.refreshToken,
      'query-secret-123',
      'not-a-token',
      'audit me',
    ])
      expect(dump).not.toContain(secret);
  });

  it('lists newest first with filters and cursor paging; refuses bad input and non-admins', async () => {
    const tag = `page-${Date.now()}`;
    for (let i = 0; i < 5; i++)
      await t.api('POST', '/api/assistant/memory', {
        token: alice.accessToken,
        body: { content: `page ${i}`, source: 'shared' },
        headers: { 'x-request-id': `${tag}-${i}` },
      });
    await flush();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await logs(
        `actorUserId=${alice.id}&method=post&path=/api/assistant/&status=201&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(r.status).toBe(200);
      expect(r.body.logs.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.logs.map((l: any) => l.requestId));
      cursor = r.body.nextCursor;
    } while (cursor);
    const mine = seen.filter((id) => id.startsWith(tag));
    expect(mine).toEqual([4, 3, 2, 1, 0].map((i) => `${tag}-${i}`));

    const one = await logs(`requestId=${tag}-2`);
    expect(one.body.logs).toHaveLength(1);
    expect(one.body.logs[0]).toMatchObject({
      requestId: `${tag}-2`,
      actorKind: 'user',
      actorUserId: alice.id,
    });
    const at = one.body.logs[0].at;
    expect((await logs(`requestId=${tag}-2&from=${encodeURIComponent(at)}`)).body.logs).toHaveLength(1);
    expect((await logs(`requestId=${tag}-2&to=${encodeURIComponent(at)}`)).body.logs).toHaveLength(0);
    expect((await logs('path=/api/nothing/here')).body.logs).toHaveLength(0);

    for (const q of [
      'cursor=nope',
      'limit=0',
      'limit=201',
      'status=99',
      'from=yesterday',
      'from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
    ])
      expect((await logs(q)).status, q).toBe(400);
    expect((await logs('', alice.accessToken)).status).toBe(403);
    expect((await t.api('GET', '/api/admin/logs')).status).toBe(401);
  });

  it('a failed audit write never fails the request', async () => {
    await flush();
    await sql`alter table audit_logs rename to audit_logs_away`.execute(t.deps.db);
    try {
      const r = await t.api('POST', '/api/assistant/memory', {
        token: alice.accessToken,
        body: { content: 'while the log is away', source: 'shared' },
        headers: { 'x-request-id': 'lost-entry' },
      });
      expect(r.status).toBe(201);
      await flush();
    } finally {
      await sql`alter table audit_logs_away rename to audit_logs`.execute(t.deps.db);
    }
    const after = await t.api('POST', '/api/assistant/memory', {
      token: alice.accessToken,
      body: { content: 'log is back', source: 'shared' },
      headers: { 'x-request-id': 'kept-entry' },
    });
    expect(after.status).toBe(201);
    await flush();
    expect((await logs('requestId=kept-entry')).body.logs).toHaveLength(1);
    expect((await logs('requestId=lost-entry')).body.logs).toHaveLength(0);
  });

  it('the retention sweep removes entries older than AUDIT_LOG_RETENTION_DAYS', async () => {
    await sql`insert into audit_logs (at, request_id, method, path, status, actor_kind, duration_ms)
      values (now() - interval '91 days', 'ancient', 'POST', '/x', 200, 'anonymous', 1),
             (now() - interval '89 days', 'old-but-kept', 'POST', '/x', 200, 'anonymous', 1)`.execute(
      t.deps.db,
    );
    expect(await t.deps.services.audit.sweep()).toBe(1);
    expect((await logs('requestId=ancient')).body.logs).toHaveLength(0);
    expect((await logs('requestId=old-but-kept')).body.logs).toHaveLength(1);
  });
});
