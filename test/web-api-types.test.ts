// The web console's API types (web/src/api/schema.d.ts) are generated from this service's own
// OpenAPI document; a route or schema change without `npm run web:api` fails here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCHEMA_FILE, typesFor } from '../web/scripts/openapi-types.js';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it('web/src/api/schema.d.ts matches /api/openapi.json (run `npm run web:api`)', async () => {
  const doc = (await t.api('GET', '/api/openapi.json')).body;
  expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(await typesFor(doc));
});
