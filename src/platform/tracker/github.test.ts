// The GitHub issues client against a local fake of the API: each kind of answer sorted into
// created, retryable or failed, and a server that does not answer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitHubIssues, retryableStatus } from './github.js';

let server: Server;
let origin: string;
/** The next answer: status, headers and body text; `null` answers nothing at all. */
let answer: { status: number; headers?: Record<string, string>; body: string } | null;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (answer === null) return; // never answered: the client's timeout ends it
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

const issue = { title: 't', body: 'b' };
const tracker = (apiUrl = origin, timeoutMs = 5000) =>
  gitHubIssues({ token: 'ghp_secret', repo: 'acme/harbour', apiUrl, timeoutMs });

describe('gitHubIssues', () => {
  it.each([
    [
      201,
      {},
      '{"number":7,"html_url":"https://github.com/acme/harbour/issues/7"}',
      { kind: 'created', number: 7, url: 'https://github.com/acme/harbour/issues/7' },
    ],
    [201, {}, '{"id":1}', { kind: 'failed', retryable: false, status: 201 }],
    [
      401,
      {},
      '{"message":"Bad credentials"}',
      { kind: 'failed', retryable: false, status: 401, error: 'answered 401: Bad credentials' },
    ],
    [404, {}, '{"message":"Not Found"}', { kind: 'failed', retryable: false, status: 404 }],
    [
      410,
      {},
      '{"message":"Issues are disabled for this repo"}',
      { kind: 'failed', retryable: false, status: 410 },
    ],
    [422, {}, '{"message":"Validation Failed"}', { kind: 'failed', retryable: false, status: 422 }],
    [
      403,
      {},
      '{"message":"Resource not accessible by integration"}',
      { kind: 'failed', retryable: false, status: 403 },
    ],
    [
      403,
      { 'x-ratelimit-remaining': '0' },
      '{"message":"API rate limit exceeded"}',
      { kind: 'failed', retryable: true, status: 403 },
    ],
    [429, {}, '{}', { kind: 'failed', retryable: true, status: 429, error: 'answered 429' }],
    [500, {}, 'oops', { kind: 'failed', retryable: true, status: 500, error: 'answered 500' }],
    [503, {}, '{"message":"Service Unavailable"}', { kind: 'failed', retryable: true, status: 503 }],
  ] as const)('%s %j %s', async (status, headers, body, expected) => {
    answer = { status, headers, body };
    expect(await tracker().create(issue)).toMatchObject(expected);
  });

  it('no answer: a refused connection and a timeout are retryable', async () => {
    // A port nothing listens on: the server's, once closed, is not reused here.
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    expect(await tracker(`http://127.0.0.1:${port}`).create(issue)).toEqual({
      kind: 'failed',
      retryable: true,
      status: null,
      error: 'no answer: ECONNREFUSED',
    });
    answer = null;
    expect(await tracker(origin, 50).create(issue)).toMatchObject({
      kind: 'failed',
      retryable: true,
      status: null,
      error: expect.stringMatching(/^no answer: /),
    });
  });

  it('keeps the token out of the object it returns', () => {
    expect(JSON.stringify(tracker())).not.toContain('ghp_secret');
  });
});

describe('retryableStatus', () => {
  const h = (o: Record<string, string> = {}) => new Headers(o);
  it.each([
    [500, h(), true],
    [502, h(), true],
    [408, h(), true],
    [429, h(), true],
    [403, h({ 'retry-after': '60' }), true],
    [403, h({ 'x-ratelimit-remaining': '0' }), true],
    [403, h({ 'x-ratelimit-remaining': '12' }), false],
    [401, h(), false],
    [404, h(), false],
    [422, h(), false],
  ])('%s → %s', (status, headers, expected) => {
    expect(retryableStatus(status, headers)).toBe(expected);
  });
});
