// A real local HTTP server speaking the OpenAI-compatible API the gateway talks to
// (`POST /v1/chat/completions` with tool calls and SSE streaming, `POST /v1/embeddings`, vision
// requests as chat completions with `image_url` parts). The model server is the outside world, so
// tests fake it here and go through the real gateway code (ARCHITECTURE.md "Tests").
//
// Usage:
//   const fake = await startFakeModelServer();
//   const t = await createTestApp(fake.env());          // MODEL_BASE_URL etc. point at it
//   fake.replyChat({ text: 'Hello!' });                  // next chat completion answers this
//   fake.replyChat({ toolCalls: [{ name: 'modifyCurrency', arguments: { amount: 5 } }] });
//   fake.failNext('embeddings', { status: 500, times: 2 }); // next two embedding calls fail
//   fake.failNext('chat', { status: 429, retryAfter: 0 });
//   ... exercise the app ...
//   expect(fake.chatRequests()[0].body.messages).toContainEqual(...); // the prompts received
//   fake.reset(); await fake.close();
//   fake.obey(true);  // a model that follows any `[[call NAME {json}]]` found anywhere in its input
//
// With nothing queued, a chat completion answers `fake reply to: <last user text>` and an
// embedding is the offline embedder's vector of the input at `embeddingDimensions` (default 64),
// so retrieval through the fake behaves like retrieval offline.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashEmbedding } from '../src/platform/models/lexical-embedder.js';

export type FakeRoute = 'chat' | 'embeddings';

export interface FakeToolCall {
  name: string;
  /** Any JSON value; sent as the JSON-encoded `arguments` string, as OpenAI does. */
  arguments: unknown;
  /** Sent as the `arguments` string instead, as it is (a model's malformed output). */
  rawArguments?: string;
  id?: string;
}

export interface FakeChatReply {
  text?: string;
  toolCalls?: FakeToolCall[];
  usage?: { promptTokens: number; completionTokens: number };
  finishReason?: 'stop' | 'tool_calls' | 'length';
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
  /** Answer only once this settles: a request held back until the test lets it go (one that never
   * settles is never answered, for the caller's timeout). */
  until?: Promise<unknown>;
  /** Only a request this accepts gets this reply (requests made concurrently, e.g. a background
   * vision call beside a chat turn); the first queued reply that fits answers. */
  when?: (body: any) => boolean;
}

export interface FakeFailure {
  status: number;
  /** How many consecutive calls fail (default 1). */
  times?: number;
  /** Sent as the Retry-After header, in seconds. */
  retryAfter?: number;
  message?: string;
  delayMs?: number;
  /** Only a request this accepts fails (the first queued failure that fits applies). */
  when?: (body: any) => boolean;
}

export interface RecordedRequest {
  route: FakeRoute;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  at: number;
}

export interface FakeModelServer {
  /** Base URL to give the gateway (`MODEL_BASE_URL`), ending in `/v1`. */
  url: string;
  /** Environment for createTestApp: base URL, key and model names. */
  env(overrides?: Record<string, string>): Record<string, string>;
  replyChat(reply: FakeChatReply): void;
  failNext(route: FakeRoute, failure: FakeFailure): void;
  /** With nothing queued, do what the input says: every `[[call NAME {json}]]` anywhere in the
   * system prompt or the messages (a player's, a document's, a memory's) becomes a tool call,
   * once (since the last reset), unless the request already carries tool results (the
   * prompt-injection test model). */
  obey(on: boolean): void;
  /** Answers embeddings with this function instead of the hashed default. */
  embedWith(fn: ((input: string) => number[]) | null): void;
  embeddingDimensions: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  chatRequests(): RecordedRequest[];
  embeddingRequests(): RecordedRequest[];
  /** Texts that reached the embeddings endpoint, in order, flattened across requests. */
  embeddedInputs(): string[];
  /** Clears queues, failures, recorded requests and the embedding override. */
  reset(): void;
  close(): Promise<void>;
}

interface Pending {
  failures: FakeFailure[];
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lastUserText(messages: any[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content))
      return m.content
        .filter((p: { type: string }) => p.type === 'text')
        .map((p: { text: string }) => p.text)
        .join(' ');
  }
  return '';
}

const ORDER = /\[\[call (\w+) (\{[^{}]*\})\]\]/g;

/** The tool calls an obedient model makes: every order in its input not yet followed (since the
 * last reset), in order; an order seen again in the history or a memory is not repeated. */
function ordersIn(body: any, followed: Set<string>): FakeToolCall[] | undefined {
  const messages: any[] = body.messages ?? [];
  if (messages.some((m) => m?.role === 'tool')) return undefined;
  const texts = messages.flatMap((m) =>
    typeof m?.content === 'string'
      ? [m.content]
      : Array.isArray(m?.content)
        ? m.content.filter((p: any) => p.type === 'text').map((p: any) => String(p.text))
        : [],
  );
  const calls: FakeToolCall[] = [];
  for (const text of texts)
    for (const [order, name, args] of text.matchAll(ORDER)) {
      if (followed.has(order)) continue;
      try {
        calls.push({ name, arguments: JSON.parse(args) });
        followed.add(order);
      } catch {
        // not JSON: not an order
      }
    }
  return calls.length ? calls : undefined;
}

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const chatQueue: FakeChatReply[] = [];
  const pending: Record<FakeRoute, Pending> = { chat: { failures: [] }, embeddings: { failures: [] } };
  let embedOverride: ((input: string) => number[]) | null = null;
  let callId = 0;
  let obedient = false;
  const followed = new Set<string>();

  const state = {
    embeddingDimensions: 64,
    requests: [] as RecordedRequest[],
  };

  function takeFailure(route: FakeRoute, body: unknown): FakeFailure | undefined {
    const list = pending[route].failures;
    const at = list.findIndex((f) => !f.when || f.when(body));
    const f = list[at];
    if (!f) return undefined;
    const left = (f.times ?? 1) - 1;
    if (left <= 0) list.splice(at, 1);
    else f.times = left;
    return f;
  }

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  async function chat(body: any, res: ServerResponse) {
    const fit = chatQueue.findIndex((r) => !r.when || r.when(body));
    const orders = obedient ? ordersIn(body, followed) : undefined;
    const reply: FakeChatReply =
      (fit >= 0 ? chatQueue.splice(fit, 1)[0] : undefined) ??
      (orders ? { toolCalls: orders } : { text: `fake reply to: ${lastUserText(body.messages ?? [])}` });
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.until) await reply.until.catch(() => undefined);
    const id = `chatcmpl-${++callId}`;
    const model = String(body.model ?? 'fake');
    const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
      index: i,
      id: c.id ?? `call_${callId}_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.arguments ?? {}) },
    }));
    const finish = reply.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
    const text = reply.text ?? (toolCalls.length ? '' : 'ok');
    const usage = {
      prompt_tokens: reply.usage?.promptTokens ?? 11,
      completion_tokens: reply.usage?.completionTokens ?? 7,
      total_tokens: (reply.usage?.promptTokens ?? 11) + (reply.usage?.completionTokens ?? 7),
    };
    const created = Math.floor(Date.now() / 1000);

    if (!body.stream) {
      json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text || null,
              ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _i, ...c }) => c) } : {}),
            },
            finish_reason: finish,
          },
        ],
        usage,
      });
      return;
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    const base = { id, object: 'chat.completion.chunk', created, model };
    send({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    // Split the text into a few deltas so streaming consumers see more than one.
    const pieces = text.match(/.{1,8}/gs) ?? [];
    for (const piece of pieces) {
      send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
      await sleep(1);
    }
    for (const c of toolCalls)
      send({ ...base, choices: [{ index: 0, delta: { tool_calls: [c] }, finish_reason: null }] });
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (body.stream_options?.include_usage) send({ ...base, choices: [], usage });
    res.write('data: [DONE]\n\n');
    res.end();
  }

  function embeddings(body: any, res: ServerResponse) {
    const inputs: string[] = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? '')];
    const dims = typeof body.dimensions === 'number' ? body.dimensions : state.embeddingDimensions;
    const data = inputs.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: embedOverride ? embedOverride(text) : Array.from(hashEmbedding(text, dims)),
    }));
    const tokens = inputs.reduce((n, s) => n + Math.ceil(s.length / 4), 0);
    json(res, 200, {
      object: 'list',
      data,
      model: String(body.model ?? 'fake-embed'),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const route: FakeRoute | null = path.endsWith('/chat/completions')
        ? 'chat'
        : path.endsWith('/embeddings')
          ? 'embeddings'
          : null;
      if (req.method !== 'POST' || !route) return json(res, 404, { error: { message: 'not found' } });
      const raw = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return json(res, 400, { error: { message: 'invalid JSON' } });
      }
      state.requests.push({ route, path, headers: req.headers, body, at: Date.now() });
      const failure = takeFailure(route, body);
      if (failure) {
        if (failure.delayMs) await sleep(failure.delayMs);
        return json(
          res,
          failure.status,
          {
            error: {
              message: failure.message ?? `fake failure ${failure.status}`,
              type: 'fake_error',
              code: String(failure.status),
            },
          },
          failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {},
        );
      }
      if (route === 'chat') return chat(body, res);
      return embeddings(body, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: String(err) } });
      else res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/v1`;

  const api: FakeModelServer = {
    url,
    env: (overrides = {}) => ({
      MODEL_BASE_URL: url,
      MODEL_API_KEY: 'fake-key',
      CHAT_MODEL: 'fake-chat',
      EMBEDDING_MODEL: 'fake-embed',
      VISION_MODEL: 'fake-vision',
      MODEL_RETRY_BASE_MS: '5',
      // Reconciling memories by the model is a chat call after many turns: a test that wants it
      // says MEMORY_RECONCILE=model, the others keep their requests to themselves.
      MEMORY_RECONCILE: 'rules',
      ...overrides,
    }),
    replyChat: (reply) => void chatQueue.push(reply),
    failNext: (route, failure) => void pending[route].failures.push({ ...failure }),
    obey: (on) => {
      obedient = on;
    },
    embedWith: (fn) => {
      embedOverride = fn;
    },
    get embeddingDimensions() {
      return state.embeddingDimensions;
    },
    set embeddingDimensions(n: number) {
      state.embeddingDimensions = n;
    },
    get requests() {
      return state.requests;
    },
    chatRequests: () => state.requests.filter((r) => r.route === 'chat'),
    embeddingRequests: () => state.requests.filter((r) => r.route === 'embeddings'),
    embeddedInputs: () =>
      state.requests
        .filter((r) => r.route === 'embeddings')
        .flatMap((r) =>
          Array.isArray(r.body.input) ? (r.body.input as unknown[]).map(String) : [String(r.body.input)],
        ),
    reset: () => {
      chatQueue.length = 0;
      pending.chat.failures.length = 0;
      pending.embeddings.failures.length = 0;
      state.requests.length = 0;
      embedOverride = null;
      obedient = false;
      followed.clear();
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
  return api;
}
