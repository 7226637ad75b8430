// contract: "Who may call what" as a test table: every identity kind against one route of
// every row, expecting the contract's answer. Plus the problem+json shapes and the auth limit.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type IdentityKind, type TestApp, type TestUser } from './harness.js';

type Who = IdentityKind | 'apiKey' | 'none';
const WHO: Who[] = ['public', 'core_primary', 'developer', 'npc', 'cso', 'apiKey', 'none'];

let t: TestApp;
const users = {} as Record<IdentityKind, TestUser>;
let apiKey: string;

beforeAll(async () => {
  t = await createTestApp();
  for (const kind of ['public', 'core_primary', 'developer', 'npc', 'cso'] as IdentityKind[])
    users[kind] = await createUser(t, kind);
  apiKey = (await t.deps.services.auth.createApiKey('all', ['sync:read', 'sync:write'], null)).key;
});
afterAll(() => t.close());

function call(who: Who, method: string, path: string) {
  if (who === 'none') return t.api(method, path);
  if (who === 'apiKey') return t.api(method, path, { apiKey });
  return t.api(method, path, { token: users[who].accessToken });
}

// One route per row of the contract's table, and the expected status per identity.
const ROWS: { row: string; method: string; path: string; expect: Record<Who, number> }[] = [
  {
    row: 'public: /api/health',
    method: 'GET',
    path: '/api/health',
    expect: { public: 200, core_primary: 200, developer: 200, npc: 200, cso: 200, apiKey: 200, none: 200 },
  },
  {
    row: 'public: /api/openapi.json',
    method: 'GET',
    path: '/api/openapi.json',
    expect: { public: 200, core_primary: 200, developer: 200, npc: 200, cso: 200, apiKey: 200, none: 200 },
  },
  {
    row: 'public: /metrics',
    method: 'GET',
    path: '/metrics',
    expect: { public: 200, core_primary: 200, developer: 200, npc: 200, cso: 200, apiKey: 200, none: 200 },
  },
  {
    row: 'public: /docs',
    method: 'GET',
    path: '/docs',
    expect: { public: 200, core_primary: 200, developer: 200, npc: 200, cso: 200, apiKey: 200, none: 200 },
  },
  {
    row: 'access token: /api/user/*',
    method: 'GET',
    path: '/api/user/profile',
    expect: { public: 200, core_primary: 200, developer: 200, npc: 200, cso: 200, apiKey: 401, none: 401 },
  },
  {
    row: 'admin: /api/admin/*',
    method: 'GET',
    path: '/api/admin/users',
    expect: { public: 403, core_primary: 403, developer: 200, npc: 403, cso: 200, apiKey: 401, none: 401 },
  },
  {
    row: 'admin: /api/admin/health',
    method: 'GET',
    path: '/api/admin/health',
    expect: { public: 403, core_primary: 403, developer: 200, npc: 403, cso: 200, apiKey: 401, none: 401 },
  },
  ...(
    [
      ['/api/assistant/*', '/api/assistant/history'],
      ['/api/conversations/*', '/api/conversations'],
      ['/api/quests/*', '/api/quests'],
      ['/api/memories/*', '/api/memories'],
      ['/api/items/*', '/api/items'],
      ['GET /api/inventory', '/api/inventory'],
      ['/api/protocol/* (read)', '/api/protocol/protocols'],
      ['/api/tools/* (read)', '/api/tools'],
    ] as const
  ).map(([row, path]) => ({
    row: `access token: ${row}`,
    method: 'GET',
    path,
    expect: { public: 200, core_primary: 200, developer: 200, npc: 200, cso: 200, apiKey: 401, none: 401 },
  })),
  {
    // Admins get past authorisation to validation (no body): 400, not 403.
    row: 'admin: POST /api/inventory/modify',
    method: 'POST',
    path: '/api/inventory/modify',
    expect: { public: 403, core_primary: 403, developer: 400, npc: 403, cso: 400, apiKey: 401, none: 401 },
  },
  {
    row: 'admin: protocol writes',
    method: 'POST',
    path: '/api/protocol/protocols',
    expect: { public: 403, core_primary: 403, developer: 422, npc: 403, cso: 422, apiKey: 401, none: 401 },
  },
  {
    row: 'admin: channel-configuration writes',
    method: 'POST',
    path: '/api/chat-platform/channel/config',
    expect: { public: 403, core_primary: 403, developer: 400, npc: 403, cso: 400, apiKey: 401, none: 401 },
  },
  {
    // Hybrid: a present token is judged alone (non-admin → 403); no token → the API key.
    row: 'hybrid: GET /api/sync/universal-state',
    method: 'GET',
    path: '/api/sync/universal-state',
    expect: { public: 403, core_primary: 403, developer: 200, npc: 403, cso: 200, apiKey: 200, none: 401 },
  },
  {
    row: 'hybrid: POST /api/sync/ingest-event',
    method: 'POST',
    path: '/api/sync/ingest-event',
    expect: { public: 403, core_primary: 403, developer: 400, npc: 403, cso: 400, apiKey: 400, none: 401 },
  },
  {
    // This key has the sync scopes only: chat-platform:command is needed.
    row: 'hybrid: POST /api/chat-platform/commands',
    method: 'POST',
    path: '/api/chat-platform/commands',
    expect: { public: 403, core_primary: 403, developer: 400, npc: 403, cso: 400, apiKey: 403, none: 401 },
  },
  ...(
    [
      ['GET', '/api/admin/logs', 200],
      ['GET', '/api/admin/scheduled-tasks', 200],
      ['POST', '/api/admin/scheduled-tasks', 400],
      ['POST', '/api/admin/prompts/preview', 400],
      ['GET', '/api/admin/data/relationships', 200],
      ['POST', '/api/subject-consciousness/onboarding/999999999', 404],
      ['POST', '/api/subject-consciousness/encode/999999999', 400],
    ] as const
  ).map(([method, path, adminStatus]) => ({
    row: `admin: ${method} ${path}`,
    method,
    path,
    expect: {
      public: 403,
      core_primary: 403,
      developer: adminStatus,
      npc: 403,
      cso: adminStatus,
      apiKey: 401,
      none: 401,
    },
  })),
  {
    // CSO, admin or the observer's owner; anyone else 403, unknown ids too (no oracle).
    row: 'observer readers: GET /api/subject-consciousness/*',
    method: 'GET',
    path: '/api/subject-consciousness/dashboard/999999999',
    expect: { public: 403, core_primary: 403, developer: 404, npc: 403, cso: 404, apiKey: 401, none: 401 },
  },
  {
    row: 'access token: DELETE /api/protocol/protocols/<id> (never allowed)',
    method: 'DELETE',
    path: '/api/protocol/protocols/core_identity_v1',
    expect: { public: 405, core_primary: 405, developer: 405, npc: 405, cso: 405, apiKey: 401, none: 401 },
  },
  {
    row: 'admin: chat-platform user links',
    method: 'GET',
    path: '/api/admin/chat-platform/users',
    expect: { public: 403, core_primary: 403, developer: 200, npc: 403, cso: 200, apiKey: 401, none: 401 },
  },
  {
    row: 'admin: /api/training/*',
    method: 'GET',
    path: '/api/training/jobs',
    expect: { public: 403, core_primary: 403, developer: 200, npc: 403, cso: 200, apiKey: 401, none: 401 },
  },
];

describe('who may call what', () => {
  for (const r of ROWS) {
    it.each(WHO)(`${r.row} as %s`, async (who) => {
      const res = await call(who, r.method, r.path);
      expect(res.status).toBe(r.expect[who]);
      if (res.status >= 400) {
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const codes: Record<number, string> = {
          400: 'validation_failed',
          401: 'unauthenticated',
          403: 'forbidden',
          404: 'not_found',
          405: 'method_not_allowed',
          422: 'invalid_definition',
        };
        expect(res.body.code).toBe(codes[res.status]);
      }
    });
  }

  // The observer's routes: a CSO, an admin or the observer's owner (the root has none here).
  const observerRow: Record<Who, number> = {
    public: 403,
    core_primary: 403,
    developer: 200,
    npc: 403,
    cso: 200,
    apiKey: 401,
    none: 401,
  };
  it.each(WHO)('observer: /api/observer/* as %s', async (who) => {
    const root = await t.deps.services.timeline.rootObserverId();
    const res = await call(who, 'GET', `/api/observer/observer/${root}/5d-navigation/range`);
    expect(res.status).toBe(observerRow[who]);
  });

  // The list of observers answers every signed-in user (what each may observe), never a key.
  it.each(WHO)('observer: GET /api/observer/observers as %s', async (who) => {
    const res = await call(who, 'GET', '/api/observer/observers');
    const expected = who === 'apiKey' || who === 'none' ? 401 : 200;
    expect(res.status).toBe(expected);
    if (expected === 200) {
      const root = await t.deps.services.timeline.rootObserverId();
      const ids = (res.body as { observers: { id: number }[] }).observers.map((o) => o.id);
      // The root has no owner: only a CSO or an admin sees it.
      expect(ids.includes(root)).toBe(observerRow[who as IdentityKind] === 200);
    }
  });

  it('admits an id listed in ADMIN_USER_IDS as admin', async () => {
    const other = await createTestApp({ ADMIN_USER_IDS: '900001' });
    try {
      await sql`insert into users (id, email, name, role, account_type) overriding system value
        values (900001, 'listed@example.test', 'listed', 'carbon', 'public')`.execute(other.deps.db);
      const row = await other.deps.services.users.get(900001);
      const { accessToken } = await other.deps.services.auth.issue(row, 'api');
      expect((await other.api('GET', '/api/admin/users', { token: accessToken })).status).toBe(200);
      const plain = await createUser(other);
      expect((await other.api('GET', '/api/admin/users', { token: plain.accessToken })).status).toBe(403);
    } finally {
      await other.close();
    }
  });
});

describe('problem+json for framework errors', () => {
  it('404 for an unknown route, with no internals', async () => {
    const res = await t.api('GET', '/api/does-not-exist');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: '/problems/not_found', code: 'not_found', status: 404 });
  });

  it('carries the request id back', async () => {
    const res = await t.api('GET', '/api/health', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-abc.123');
  });

  it('exposes an OpenAPI 3.1 document with the auth routes', async () => {
    const res = await t.api('GET', '/api/openapi.json');
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/api/auth/register', '/api/auth/login', '/api/user/profile']),
    );
  });

  it('counts requests in /metrics', async () => {
    const res = await t.api('GET', '/metrics');
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/api\/health",status="200"\} \d+/);
  });

  it('reports the sketch index size in /metrics (0 with pgvector, which needs none)', async () => {
    const res = await t.api('GET', '/metrics');
    const bytes = Number(/\nmemory_sketch_index_bytes (\d+)\n/.exec(res.text)?.[1]);
    expect(bytes).toBe(t.deps.services.memory.sketchIndexStats()?.bytes ?? 0);
  });
});

describe('auth rate limit', () => {
  it('answers 429 with Retry-After once an IP exceeds the per-minute limit on /api/auth/*', async () => {
    const limited = await createTestApp({ AUTH_RATE_LIMIT: '5' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        // Different auth routes share one budget per IP.
        const res =
          i % 2 === 0
            ? await limited.api('POST', '/api/auth/login', {
                body: { email: 'x@example.test', password: 'whatever pw' },
              })
            : await limited.api('POST', '/api/auth/refresh', { body: { refreshToken: 'nope' } });
        statuses.push(res.status);
        if (res.status === 429) {
          expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(res.body.code).toBe('rate_limited');
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        }
      }
      expect(statuses.slice(0, 5).every((s) => s === 401)).toBe(true);
      expect(statuses.slice(5)).toEqual([429, 429]);
    } finally {
      await limited.close();
    }
  });
});
