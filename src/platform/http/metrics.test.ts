// Who may read /metrics: the token's bearer when METRICS_TOKEN is set, else this machine only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { isLoopback, metricsAllowed } from './metrics.js';

describe('metrics access rules', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.12.0.9', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.5', false],
    ['::ffff:192.168.1.2', false],
    ['2001:db8::1', false],
    [undefined, false],
  ])('isLoopback(%s) = %s', (address, loopback) => {
    expect(isLoopback(address)).toBe(loopback);
  });

  it.each([
    [undefined, undefined, '127.0.0.1', true],
    [undefined, 'Bearer anything', '10.0.0.5', false],
    ['a-metrics-token-123', 'Bearer a-metrics-token-123', '10.0.0.5', true],
    ['a-metrics-token-123', 'Bearer a-metrics-token-124', '127.0.0.1', false],
    ['a-metrics-token-123', undefined, '127.0.0.1', false],
  ])('metricsAllowed(%s, %s, %s) = %s', (token, header, peer, allowed) => {
    expect(metricsAllowed(token, header, peer)).toBe(allowed);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: 'scrape-me-please-0123' });
  });
  afterAll(() => t.close());

  it('refuses a caller without the token, even on this machine, and answers its bearer', async () => {
    const without = await t.api('GET', '/metrics');
    expect(without.status).toBe(401);
    expect(without.body.code).toBe('unauthenticated');
    const wrong = await t.api('GET', '/metrics', { token: 'scrape-me-please-0124' });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${t.url}/metrics`, {
      headers: { authorization: 'Bearer scrape-me-please-0123' },
    });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('http_requests_total');
  });
});
