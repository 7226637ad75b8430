import { expect } from 'vitest';

/** Asserts a problem+json answer with this status and code; returns its body. */
export function expectProblem(
  r: { status: number; headers: Headers; body: any; text: string },
  status: number,
  code: string,
) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(r.body.code).toBe(code);
  return r.body;
}
