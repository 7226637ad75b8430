// Errors raised before a route runs are problem+json too: a URL that is not validly
// percent-encoded and an over-long path parameter (Fastify's router), a request line or headers
// over Node's size limit and bytes that are not HTTP (Node's parser, answered on the raw socket).
// Sent as raw requests: fetch would refuse or rewrite some of them.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorProblem, rawProblemResponse } from '../src/platform/http/problem.js';
import { createTestApp, createUser, type TestApp, type TestUser } from './harness.js';

let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  user = await createUser(t, 'public');
});
afterAll(() => t.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** Writes `request` as it is on a new connection and reads the answer until the server closes
 * the connection (every request here says `Connection: close`, or is refused with it). */
function rawRequest(request: string): Promise<RawResponse> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => (chunks.length > 0 ? undefined : reject(err)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const bodyText = rest.join('\r\n\r\n');
      let body: unknown = bodyText;
      try {
        body = JSON.parse(bodyText);
      } catch {
        // not JSON: keep the text
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.write(request);
  });
}

const get = (path: string, extraHeaders = '') =>
  rawRequest(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.accessToken}\r\n` +
      `${extraHeaders}Connection: close\r\n\r\n`,
  );

function expectProblem(res: RawResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `/problems/${code}`, status, code });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
}

describe('routing errors', () => {
  it('a badly percent-encoded URL: 400 validation_failed on url', async () => {
    const res = await get('/api/memories/%ff');
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: 'url', message: 'the URL is not validly percent-encoded' }]);
  });

  it('a path parameter over the router limit: 414 uri_too_long', async () => {
    expectProblem(await get(`/api/memories/${'1'.repeat(101)}`), 414, 'uri_too_long');
    // At the limit it reaches the route (its own validation answers).
    expectProblem(await get(`/api/memories/${'1'.repeat(100)}`), 400, 'validation_failed');
  });
});

describe("errors of Node's HTTP parser (clientErrorHandler)", () => {
  it('an over-long URL: 431 headers_too_large, then the connection closes', async () => {
    const res = await get(`/api/health?pad=${'a'.repeat(20_000)}`);
    expectProblem(res, 431, 'headers_too_large');
    expect(res.headers.connection).toBe('close');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
  });

  it('over-long headers: 431 headers_too_large', async () => {
    const res = await get('/api/health', `X-Padding: ${'b'.repeat(20_000)}\r\n`);
    expectProblem(res, 431, 'headers_too_large');
    expect(res.headers.connection).toBe('close');
  });

  it('bytes that are not HTTP: 400 validation_failed', async () => {
    const res = await rawRequest('NOT HTTP AT ALL\r\n\r\n');
    expectProblem(res, 400, 'validation_failed');
    expect(res.headers.connection).toBe('close');
  });

  it('the server still answers afterwards', async () => {
    const res = await get('/api/health');
    expect(res.status).toBe(200);
  });
});

describe('clientErrorProblem and rawProblemResponse', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431, 'headers_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_INVALID_METHOD', 400, 'validation_failed'],
    [undefined, 400, 'validation_failed'],
  ])('%s → %i %s', (code, status, problemCode) => {
    const problem = clientErrorProblem({ code });
    expect(problem).toMatchObject({ status, code: problemCode });
    const raw = rawProblemResponse(problem);
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(head).toContain('Content-Type: application/problem+json');
    expect(head).toContain('Connection: close');
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body!)}`);
    expect(JSON.parse(body!)).toEqual(problem);
  });
});
