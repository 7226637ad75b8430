// The web console's serving: the client routes answer index.html (no-cache, strict CSP), hashed
// assets are immutable, and the API's own paths are never shadowed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWeb, WEB_CSP, WEB_ROUTES } from '../src/platform/http/web.js';
import { ROUTES } from '../web/src/routes.js';
import { createTestApp, type TestApp } from './harness.js';

describe('web console files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'web-'));
  const app = Fastify();
  beforeAll(async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    registerWeb(app, dir);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    '/',
    '/verify-email?token=x',
    '/reset-password?token=y',
    '/chat',
    '/admin',
    '/admin/scheduled-tasks',
    '/admin/audit-log',
    '/auth/callback',
  ])('%s answers index.html, not cached, with the CSP', async (url) => {
    const res = await app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(WEB_CSP);
    expect(res.body).toContain('console');
  });

  // A page added to the console's route table answers a reload and a deep link: the server reads
  // the same table.
  it.each(ROUTES.map((r) => r.path))('%s, a route of the console, answers index.html', async (url) => {
    expect(WEB_ROUTES).toContain(url);
    const res = await app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('console');
  });

  it('serves hashed assets as immutable', async () => {
    const res = await app.inject({ url: '/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toContain('immutable');
  });

  it('refuses traversal and unknown assets', async () => {
    for (const url of ['/assets/..%2Findex.html', '/assets/nope.js', '/assets/.hidden.js', '/assets/x.txt'])
      expect((await app.inject({ url })).statusCode).toBe(404);
  });

  it("says what to do when the console isn't built", async () => {
    const bare = Fastify();
    registerWeb(bare, join(dir, 'missing'));
    const res = await bare.inject({ url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('web:build');
    await bare.close();
  });
});

describe('web console inside the service', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('leaves /api, /docs and /metrics alone', async () => {
    expect((await t.api('GET', '/api/health')).headers.get('content-type')).toMatch(/json/);
    const unknown = await t.api('GET', '/api/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/problem\+json/);
    expect((await t.api('GET', '/metrics')).text).toContain('http_requests_total');
    // The API reference page, which reads the service's own OpenAPI document.
    const docs = await fetch(`${t.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await docs.text()).toContain('/api/openapi.json');
    expect((await fetch(`${t.url}/socket.io/?EIO=4&transport=polling`)).status).toBe(200);
  });
});
