// The OpenAPI document as a reader of /docs meets it: every operation says what it does beyond its
// summary, and shows an example of what it takes or gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
