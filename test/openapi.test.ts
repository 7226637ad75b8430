// The OpenAPI document as a reader of /docs meets it: every operation says what it does beyond its
// summary, shows an example of what it takes or gives, says what each of its answers means, and
// asks for credentials exactly when the server does.
import { STATUS_CODES } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, type ProblemCode } from '../src/platform/http/problem.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.api('GET', '/api/openapi.json')).body;
});
afterAll(() => t.close());

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
function operations(): [string, any][] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [`${m.toUpperCase()} ${path}`, item[m]] as [string, any]),
  );
}

/** Whether a schema, or one it refers to or contains, carries an example. */
function hasExample(schema: any, seen = new Set<any>()): boolean {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return false;
  seen.add(schema);
  if (schema.example !== undefined || (Array.isArray(schema.examples) && schema.examples.length > 0))
    return true;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').at(-1);
    return hasExample(doc.components.schemas[name], seen);
  }
  return Object.values(schema).some((v) => hasExample(v, seen));
}

const mediaHasExample = (content: any) =>
  Object.values<any>(content ?? {}).some(
    (m) => m.example !== undefined || m.examples || hasExample(m.schema),
  );

describe('OpenAPI document', () => {
  it('has a description for every operation', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(90);
    expect(
      ops
        .filter(([, op]) => !(typeof op.description === 'string' && op.description.length > 20))
        .map(([k]) => k),
    ).toEqual([]);
  });

  it('has an example for every request body and path parameter', () => {
    const missing: string[] = [];
    for (const [key, op] of operations()) {
      if (op.requestBody && !mediaHasExample(op.requestBody.content)) missing.push(`${key} body`);
      for (const p of op.parameters ?? [])
        if (p.in === 'path' && p.example === undefined && !hasExample(p.schema))
          missing.push(`${key} ${p.name}`);
    }
    expect(missing).toEqual([]);
  });

  it('has an example for every operation: of what it takes or of what it answers', () => {
    const missing = operations()
      .filter(([, op]) => {
        const takes =
          mediaHasExample(op.requestBody?.content) ||
          (op.parameters ?? []).some((p: any) => p.example !== undefined || hasExample(p.schema));
        const gives = Object.entries<any>(op.responses ?? {}).some(
          ([code, r]) => code.startsWith('2') && mediaHasExample(r.content),
        );
        // An operation that takes nothing and only ever refuses (GET /api/files/upload: 405) has nothing to show.
        const answersOnlyErrors = !Object.keys(op.responses ?? {}).some(
          (c) => c.startsWith('2') || c.startsWith('3'),
        );
        return !takes && !gives && !answersOnlyErrors;
      })
      .map(([k]) => k);
    expect(missing).toEqual([]);
  });

  it('describes every answer: a success in the route’s own words, a refusal by the codes of its status', () => {
    const wrong: string[] = [];
    const summaries = new Set<string>();
    for (const [key, op] of operations())
      for (const [code, r] of Object.entries<any>(op.responses ?? {})) {
        const status = Number(code);
        const reason = STATUS_CODES[status]!;
        const text: unknown = r.description;
        if (typeof text !== 'string' || text === 'Default Response' || !text.startsWith(`${reason}: `)) {
          wrong.push(`${key} ${code}: ${String(text)}`);
          continue;
        }
        const words = text.slice(reason.length + 2);
        if (status < 400) {
          // The route's own: its summary, or what its response schema says of itself.
          if (words.length < 8) wrong.push(`${key} ${code}: ${text}`);
          if (words === op.summary) summaries.add(key);
          continue;
        }
        // A problem (or OpenAI error) names a code of its status: `code` in backquotes.
        const body = JSON.stringify(r.content ?? {});
        if (!/Problem|OpenAiError/.test(body)) continue;
        const codes = [...words.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as ProblemCode);
        if (!codes.some((c) => new AppError(c).status === status)) wrong.push(`${key} ${code}: ${text}`);
      }
    expect(wrong).toEqual([]);
    expect(summaries.size).toBeGreaterThan(90);
  });

  it('says a 401 in the words of the route’s caller: the credentials sent to a public route, else the access token or key', () => {
    const login = doc.paths['/api/auth/login'].post.responses['401'].description;
    expect(login).toContain('`invalid_credentials`');
    expect(login).not.toContain('token_expired');
    const profile = doc.paths['/api/user/profile'].get.responses['401'].description;
    expect(profile).toContain('`token_expired`');
    expect(profile).not.toContain('invalid_credentials');
    expect(doc.paths['/api/sync/universal-state'].get.responses['401'].description).toContain('X-API-Key');
    expect(doc.paths['/api/health'].get.responses['503'].description).toContain('degraded');
  });

  it('asks no credentials of public routes and the bearer token (or an API key where one is taken) of the rest', () => {
    expect(doc.security).toEqual([{ bearer: [] }]);
    const publicRoutes: [string, string][] = [
      ['post', '/api/auth/register'],
      ['post', '/api/auth/login'],
      ['post', '/api/auth/refresh'],
      ['get', '/api/auth/providers'],
      ['get', '/api/health'],
    ];
    for (const [method, path] of publicRoutes)
      expect(doc.paths[path][method].security, `${method} ${path}`).toEqual([]);
    expect(doc.paths['/api/user/profile'].get.security).toBeUndefined();
    expect(doc.paths['/api/admin/users'].get.security).toBeUndefined();
    expect(doc.paths['/v1/models'].get.security).toBeUndefined();
    for (const path of ['/api/sync/universal-state', '/api/sync/players/{externalId}'])
      expect(doc.paths[path].get.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
  });

  it('claims credentials exactly where the server refuses a request without them', async () => {
    const mismatched: string[] = [];
    for (const [key, op] of operations()) {
      const [method, path] = key.split(' ') as [string, string];
      const open = (op.security ?? doc.security).length === 0;
      const res = await t.api(method, path.replaceAll(/\{[^}]+\}/g, '1'));
      // Without credentials the sign-in check answers 401 before anything else; a public route
      // goes on to judge the request (400 for the missing body, 404, 200…).
      if (open === (res.status === 401))
        mismatched.push(`${key}: ${res.status}, documented ${open ? 'public' : 'signed in'}`);
    }
    expect(mismatched).toEqual([]);
  });
});

describe('the browsable reference (/docs)', () => {
  it('serves the page, which reads this document, and its script; an unknown path is a 404 problem', async () => {
    const page = await t.api('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('/api/openapi.json');
    const src = /<script[^>]+src="([^"]+)"/.exec(page.text)?.[1];
    expect(src).toBeDefined();
    const script = await fetch(new URL(src!, `${t.url}/docs/`));
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^application\/javascript/);
    const missing = await t.api('GET', '/docs/no-such-file');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(missing.body.code).toBe('not_found');
  });
});
