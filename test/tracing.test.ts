// OpenTelemetry traces over OTLP/HTTP to a receiver started here (the exporter's JSON encoding):
// a span per HTTP request, and a chat turn's span with its stages as children (the context
// gathering, the model call with its tokens) and the turn's token usage. Unset, tracing is off:
// `traced` hands back the work's own promise.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { traced } from '../src/platform/tracing.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { connectSocket, createTestApp, createUser, eventually, type TestApp } from './harness.js';

interface OtlpSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  traceId: string;
  attributes: { key: string; value: { intValue?: string | number; stringValue?: string } }[];
}

let receiver: Server;
const spans: OtlpSpan[] = [];
const resources: unknown[] = [];
let fake: FakeModelServer;
let t: TestApp;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const doc = JSON.parse(body) as {
          resourceSpans: { resource: unknown; scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const rs of doc.resourceSpans) {
          resources.push(rs.resource);
          for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  fake = await startFakeModelServer();
  t = await createTestApp({ ...fake.env(), OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
});
afterAll(async () => {
  await t.close();
  await fake.close();
  await new Promise((ok) => receiver.close(ok));
});

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.intValue !== undefined ? Number(v.intValue) : v?.stringValue;
};

it('exports a span per request and a chat turn with its stages and token usage', async () => {
  expect((await t.api('GET', '/api/health')).status).toBe(200);
  const alice = await createUser(t, 'public', { name: 'Alice' });
  const c = await connectSocket(t.url, { auth: { token: alice.accessToken } });
  fake.replyChat({ text: 'Traced answer.', usage: { promptTokens: 120, completionTokens: 9 } });
  const { ack } = await c.send('chatMessage', { message: 'Hello', clientMessageId: 'trace-1' });
  expect(ack).toMatchObject({ ok: true });
  c.close();

  const health = await eventually(() => {
    const s = spans.find((x) => x.name === 'GET /api/health');
    expect(s).toBeDefined();
    return s!;
  });
  expect(attr(health, 'http.response.status_code')).toBe(200);
  const turn = await eventually(() => {
    const s = spans.find((x) => x.name === 'chat.turn');
    expect(s).toBeDefined();
    const model = spans.find((x) => x.parentSpanId === s!.spanId && x.name === 'gen_ai.stream');
    expect(model).toBeDefined();
    return s!;
  });
  const children = spans.filter((x) => x.parentSpanId === turn.spanId);
  expect(children.map((x) => x.name)).toEqual(expect.arrayContaining(['memory.context']));
  // The reply's call (streamed), beside the query's embedding call.
  const model = children.find((x) => x.name === 'gen_ai.stream')!;
  expect(attr(model, 'gen_ai.usage.input_tokens')).toBe(120);
  expect(attr(model, 'gen_ai.usage.output_tokens')).toBe(9);
  expect(attr(turn, 'gen_ai.usage.input_tokens')).toBeGreaterThanOrEqual(120);
  expect(attr(turn, 'chat.event')).toBe('chatMessage');
  expect(JSON.stringify(resources[0])).toContain('assistant-platform');
}, 60_000);

it('is off when no endpoint is set: traced runs the work as it is', async () => {
  await t.close(); // stops the exporter, sending what is left
  const work = Promise.resolve(1);
  expect(traced('x', {}, () => work)).toBe(work);
});
