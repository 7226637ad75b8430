// The model gateway through the real OpenAI-compatible provider code to a real local HTTP server
// (test/fake-model-server.ts), and the offline models.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { loadConfig } from '../../config.js';
import { testEnv } from '../../../test/env.js';
import { AppError } from '../http/problem.js';
import { createModelProvider, ModelGateway } from './gateway.js';
import { cosine, hashEmbedding } from './lexical-embedder.js';
import { offlineAnswer } from './offline-answer.js';
import { OfflineProvider } from './offline.js';
import { loadWordSimilarity } from './words.js';

let fake: FakeModelServer;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ MODEL_MAX_RETRIES: '2', MODEL_CONCURRENCY: '2' }));
});
afterEach(() => fake.reset());
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** Fake timers for the gateway's backoff (its sleep is a setTimeout): the clock stands still
 * until the test moves it. `requested(ms)` resolves once something asks it to wait exactly `ms`
 * (a signal; under fake timers `eventually` could not wait, its pause being a setTimeout). */
function fakeClock() {
  const [realSetTimeout, realClearTimeout] = [globalThis.setTimeout, globalThis.clearTimeout];
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  type Schedule = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => NodeJS.Timeout;
  const faked = globalThis.setTimeout as unknown as Schedule;
  const asked: number[] = [];
  const waiting = new Map<number, () => void>();
  const asking: Schedule = (fn, ms, ...args) => {
    asked.push(ms ?? 0);
    waiting.get(ms ?? 0)?.();
    return faked(fn, ms, ...args);
  };
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(asking as unknown as typeof setTimeout);
  return {
    requested(ms: number): Promise<void> {
      if (asked.includes(ms)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        // A failsafe on the real clock, for a readable failure instead of the test's timeout.
        const failsafe = realSetTimeout(
          () => reject(new Error(`no wait of ${ms} ms was asked for (asked: ${asked.join(', ')})`)),
          10_000,
        );
        waiting.set(ms, () => {
          realClearTimeout(failsafe);
          resolve();
        });
      });
    },
    restore() {
      spy.mockRestore();
      vi.useRealTimers();
    },
  };
}

const calls = async () => {
  await t.deps.models.flush();
  return t.deps.db.selectFrom('model_calls').selectAll().orderBy('id').execute();
};

describe('ModelGateway with an OpenAI-compatible server', () => {
  it('sends the prompt, returns text and records the call', async () => {
    fake.replyChat({ text: 'Hello, Alice.', usage: { promptTokens: 30, completionTokens: 4 } });
    const before = (await calls()).length;
    const r = await t.deps.models.chat({
      purpose: 'test.chat',
      system: 'Be kind.',
      messages: [{ role: 'user', content: 'Hi there' }],
    });
    expect(r).toMatchObject({
      text: 'Hello, Alice.',
      offline: false,
      model: 'fake-chat',
      usage: { inputTokens: 30, outputTokens: 4 },
    });
    const req = fake.chatRequests()[0]!;
    expect(req.headers.authorization).toBe('Bearer fake-key');
    expect(req.body.model).toBe('fake-chat');
    expect(req.body.messages).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'Hi there' },
    ]);
    const rows = (await calls()).slice(before);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'chat',
      purpose: 'test.chat',
      model: 'fake-chat',
      tokens_in: 30,
      tokens_out: 4,
      outcome: 'ok',
      attempts: 1,
    });
  });

  it('passes tools and returns the tool calls; sends tool results back', async () => {
    fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: { amount: 5 } }] });
    const tools = [
      {
        name: 'modifyCurrency',
        description: 'Change the balance',
        parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      },
    ];
    const r = await t.deps.models.chat({
      purpose: 'test.tools',
      messages: [{ role: 'user', content: 'give me 5 coins' }],
      tools,
    });
    expect(r.toolCalls).toEqual([{ id: expect.any(String), name: 'modifyCurrency', input: { amount: 5 } }]);
    expect(fake.chatRequests()[0]!.body.tools[0].function.name).toBe('modifyCurrency');

    fake.replyChat({ text: 'Done: you have 5 more coins.' });
    const second = await t.deps.models.chat({
      purpose: 'test.tools',
      messages: [
        { role: 'user', content: 'give me 5 coins' },
        { role: 'assistant', content: '', toolCalls: r.toolCalls },
        { role: 'tool', toolCallId: r.toolCalls[0]!.id, toolName: 'modifyCurrency', result: { balance: 5 } },
      ],
      tools,
    });
    expect(second.text).toBe('Done: you have 5 more coins.');
    const sent = fake.chatRequests()[1]!.body.messages;
    expect(sent[1].tool_calls[0].function.name).toBe('modifyCurrency');
    expect(sent[2]).toMatchObject({ role: 'tool', tool_call_id: r.toolCalls[0]!.id });
  });

  it("returns a tool call's arguments that are not JSON as their text, streamed or not", async () => {
    const tools = [
      { name: 'modifyCurrency', description: 'Change the balance', parameters: { type: 'object' } },
    ];
    const messages = [{ role: 'user' as const, content: 'give me coins' }];
    fake.replyChat({
      toolCalls: [{ name: 'modifyCurrency', arguments: null, rawArguments: '{"amount": 5' }],
    });
    const r = await t.deps.models.chat({ purpose: 'test.tools', messages, tools });
    expect(r.toolCalls).toEqual([{ id: expect.any(String), name: 'modifyCurrency', input: '{"amount": 5' }]);
    expect(r.finishReason).toBe('tool-calls');
    fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: null, rawArguments: '' }] });
    const streamed = await t.deps.models.streamChat(
      { purpose: 'test.tools', messages, tools },
      () => undefined,
    );
    expect(streamed.toolCalls).toEqual([{ id: expect.any(String), name: 'modifyCurrency', input: {} }]);
    expect(streamed).toMatchObject({
      finishReason: 'tool-calls',
      usage: { inputTokens: 11, outputTokens: 7 },
    });
  });

  it('streams text deltas', async () => {
    fake.replyChat({ text: 'A streamed answer in several pieces.' });
    const deltas: string[] = [];
    const r = await t.deps.models.streamChat(
      { purpose: 'test.stream', messages: [{ role: 'user', content: 'stream please' }] },
      (d) => deltas.push(d),
    );
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('A streamed answer in several pieces.');
    expect(r.text).toBe('A streamed answer in several pieces.');
    expect(fake.chatRequests()[0]!.body.stream).toBe(true);
  });

  it('retries 429 and 5xx, waiting as long as Retry-After asks, then succeeds', async () => {
    fake.failNext('chat', { status: 429, retryAfter: 2 });
    fake.failNext('chat', { status: 503, retryAfter: 6 });
    fake.replyChat({ text: 'third time lucky' });
    const clock = fakeClock();
    try {
      const answer = t.deps.models.chat({
        purpose: 'test.retry',
        messages: [{ role: 'user', content: 'hi' }],
      });
      for (const [failed, seconds] of [
        [1, 2],
        [2, 6],
      ] as const) {
        // The answer to attempt `failed` asked for `seconds`: the gateway waits exactly that long
        // (its backoff, a few ms here, is shorter)...
        await clock.requested(seconds * 1000);
        expect(fake.chatRequests()).toHaveLength(failed);
        await vi.advanceTimersByTimeAsync(seconds * 1000 - 1);
        expect(fake.chatRequests()).toHaveLength(failed);
        // ...and tries again once that time has passed.
        await vi.advanceTimersByTimeAsync(1);
      }
      const r = await answer;
      expect(r.text).toBe('third time lucky');
      expect(fake.chatRequests()).toHaveLength(3);
      const last = (await calls()).at(-1)!;
      expect(last).toMatchObject({ purpose: 'test.retry', outcome: 'ok', attempts: 3 });
    } finally {
      clock.restore();
    }
  });

  it('gives up after MODEL_MAX_RETRIES with model_unavailable and records the failure', async () => {
    fake.failNext('chat', { status: 500, times: 5 });
    const err = await t.deps.models
      .chat({ purpose: 'test.fail', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('model_unavailable');
    expect((err as AppError).status).toBe(503);
    expect(fake.chatRequests()).toHaveLength(3);
    expect((await calls()).at(-1)).toMatchObject({ purpose: 'test.fail', outcome: 'error', attempts: 3 });
  });

  it('does not retry a 400, and retries a timeout', async () => {
    fake.failNext('chat', { status: 400 });
    await expect(
      t.deps.models.chat({ purpose: 'test.400', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ code: 'model_unavailable' });
    expect(fake.chatRequests()).toHaveLength(1);

    fake.reset();
    // The first request is never answered; a gateway of its own gives up on it after its timeout.
    fake.replyChat({ text: 'too slow', until: new Promise(() => undefined) });
    fake.replyChat({ text: 'in time' });
    const config = loadConfig(testEnv(fake.env({ MODEL_MAX_RETRIES: '2', MODEL_TIMEOUT_MS: '2000' })));
    const impatient = new ModelGateway(createModelProvider(config), t.deps.db, t.deps.log, {
      ...config.models,
      retryBaseMs: 0,
    });
    const r = await impatient.chat({ purpose: 'test.timeout', messages: [{ role: 'user', content: 'x' }] });
    await impatient.flush();
    expect(r.text).toBe('in time');
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('keeps to the concurrency limit', async () => {
    // MODEL_CONCURRENCY=2: a request reaches the server while at most one other is unanswered, and
    // the third goes out only once one of the first two was answered (answers are counted before
    // the gateway's next request can reach the server). The first two answers are held back until
    // the second request has arrived.
    let answered = 0;
    const unansweredAtArrival: number[] = [];
    let bothArrived!: () => void;
    const held = new Promise<void>((resolve) => (bothArrived = resolve));
    const arrived = () => {
      unansweredAtArrival.push(fake.chatRequests().length - answered);
      if (fake.chatRequests().length === 2) bothArrived();
      return true;
    };
    for (let i = 0; i < 4; i++)
      fake.replyChat({ text: `r${i}`, when: arrived, until: i < 2 ? held : undefined });
    const texts = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.deps.models
          .chat({ purpose: 'test.limit', messages: [{ role: 'user', content: 'x' }] })
          .then((r) => {
            answered++;
            return r.text;
          }),
      ),
    );
    expect(texts.sort()).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(unansweredAtArrival).toHaveLength(4);
    // Two at a time, never more.
    expect(Math.max(...unansweredAtArrival)).toBe(2);
  });

  it('embeds a batch in one request', async () => {
    const r = await t.deps.models.embed(['one', 'two', 'three'], 'test.embed');
    expect(r.embeddings).toHaveLength(3);
    expect(r.dimensions).toBe(64);
    expect(fake.embeddingRequests()).toHaveLength(1);
    expect(fake.embeddedInputs()).toEqual(['one', 'two', 'three']);
  });

  it('sends images as bytes (data URL), never as a URL to fetch', async () => {
    fake.replyChat({ text: 'A red kite over a hill.' });
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const r = await t.deps.models.describeImage({
      purpose: 'test.vision',
      image: { data: png, mediaType: 'image/png' },
    });
    expect(r.text).toBe('A red kite over a hill.');
    const req = fake.chatRequests()[0]!;
    expect(req.body.model).toBe('fake-vision');
    const part = req.body.messages[0].content.find((p: { type: string }) => p.type === 'image_url');
    expect(part.image_url.url).toMatch(/^data:image\/png;base64,/);
  });

  it('reports provider, models and recent outcomes in /api/admin/health', async () => {
    const admin = await createUser(t, 'cso');
    const r = await t.api('GET', '/api/admin/health', { token: admin.accessToken });
    expect(r.status).toBe(200);
    expect(r.body.models).toMatchObject({
      provider: 'openai-compatible',
      offline: false,
      chatModel: 'fake-chat',
      embeddingModel: 'fake-embed',
    });
    expect(r.body.models.recent.ok).toBeGreaterThan(0);
    expect(r.body.models.recent.error).toBeGreaterThan(0);
    expect(r.body.models.lastErrors.length).toBeGreaterThan(0);
  });
});

describe('offline models', () => {
  it('embeds deterministically, L2-normalised, lexically meaningful', () => {
    const a = hashEmbedding('My cat is called Pixel');
    expect(a).toHaveLength(384);
    expect(Array.from(a)).toEqual(Array.from(hashEmbedding('My cat is called Pixel')));
    expect(Math.sqrt(a.reduce((n, x) => n + x * x, 0))).toBeCloseTo(1, 5);
    const near = cosine(hashEmbedding('what is my cat called?'), a);
    const far = cosine(hashEmbedding('quarterly revenue projections'), a);
    expect(near).toBeGreaterThan(far + 0.2);
    // Inflections share character trigrams.
    expect(cosine(hashEmbedding('remembered colours'), hashEmbedding('remember colour'))).toBeGreaterThan(
      0.4,
    );
    expect(Math.sqrt(hashEmbedding('').reduce((n, x) => n + x * x, 0))).toBeCloseTo(1, 5);
  });

  it('answers from the retrieved context in the protocol tone, labelled offline', async () => {
    const p = new OfflineProvider();
    const r = await p.chat({
      purpose: 'test',
      messages: [{ role: 'user', content: 'What is my cat called?' }],
      grounding: {
        memories: [
          { content: 'Your cat is called Pixel. You adopted her in May.' },
          { content: 'The capital is Lumen.' },
        ],
        tone: 'PRIVATE',
      },
    });
    expect(r.offline).toBe(true);
    expect(r.text).toContain('Pixel');
    expect(r.text).not.toContain('Lumen');
    expect(r.text.startsWith('I remember')).toBe(true);
    const words = await loadWordSimilarity();
    expect(offlineAnswer('anything about dragons?', [], 'TECH', { words })).toBe(
      'No stored context matches this query.',
    );
    expect(offlineAnswer('cat?', [{ content: 'Your cat is called Pixel.' }], 'NEUTRAL', { words })).toBe(
      'I noted: "Your cat is called Pixel."',
    );
    const deltas: string[] = [];
    const s = await p.streamChat(
      {
        purpose: 't',
        messages: [{ role: 'user', content: 'cat?' }],
        grounding: { memories: [{ content: 'The cat is Pixel.' }] },
      },
      new AbortController().signal,
      (d) => deltas.push(d),
    );
    expect(deltas.join('')).toBe(s.text);
  });

  it('reports itself as offline in /api/admin/health when no provider is configured', async () => {
    const offline = await createTestApp();
    try {
      const admin = await createUser(offline, 'cso');
      const r = await offline.api('GET', '/api/admin/health', { token: admin.accessToken });
      expect(r.body.models).toMatchObject({
        provider: 'offline',
        offline: true,
        embeddingModel: 'offline-glove-sif-v1',
        embeddingDimensions: 384,
      });
      const vision = await offline.deps.models.describeImage({
        purpose: 't',
        image: { data: new Uint8Array(10), mediaType: 'image/jpeg' },
      });
      expect(vision.text).toContain('offline');
    } finally {
      await offline.close();
    }
  });
});
