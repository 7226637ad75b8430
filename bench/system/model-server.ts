// A fake OpenAI-compatible model server that takes the time a real one takes: a chat completion's
// first token after --first-token-ms, then --tokens-per-second, --reply-tokens in all (streamed as
// SSE, or answered whole after the same time); embeddings after --embed-ms. It keeps nothing per
// request (test/fake-model-server.ts records every request, which a ten-minute run cannot afford),
// and counts what it served. Runs as a process of its own: prints `{"url": …}` once listening,
// then, on stdin's "stats", one line of counts.
// argv[2]: JSON { firstTokenMs, tokensPerSecond, replyTokens, embedMs }
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './body.js';
import { createInterface } from 'node:readline';
import { hashEmbedding } from '../../src/platform/models/lexical-embedder.js';

interface ModelTimes {
  firstTokenMs: number;
  tokensPerSecond: number;
  replyTokens: number;
  embedMs: number;
}

const WORDS =
  'I remember that you told me about the harbour and the lantern you keep by the window, and how the winter light falls on the old bridge before the market opens'.split(
    ' ',
  );
const CHOICES = ' <choices>["Tell me more", "What else do you remember?"]</choices>';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The reply's tokens: words, then the suggested replies' block a chat turn asks for. */
function replyTokens(n: number): string[] {
  const out = Array.from({ length: n }, (_, i) => (i === 0 ? '' : ' ') + WORDS[i % WORDS.length]!);
  out.push('.', CHOICES);
  return out;
}

export function startModelServer(t: ModelTimes) {
  const counts = { chat: 0, stream: 0, embeddings: 0, inputs: 0, open: 0 };
  const gap = 1000 / t.tokensPerSecond;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  async function chat(body: any, res: ServerResponse) {
    const id = `chatcmpl-${counts.chat + counts.stream}`;
    const created = Math.floor(Date.now() / 1000);
    const model = String(body.model ?? 'fake');
    const tokens = replyTokens(t.replyTokens);
    const usage = { prompt_tokens: 500, completion_tokens: tokens.length, total_tokens: 500 + tokens.length };
    await sleep(t.firstTokenMs);
    if (!body.stream) {
      counts.chat++;
      await sleep(gap * (tokens.length - 1));
      json(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          { index: 0, message: { role: 'assistant', content: tokens.join('') }, finish_reason: 'stop' },
        ],
        usage,
      });
      return;
    }
    counts.stream++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = { id, object: 'chat.completion.chunk', created, model };
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    send({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    for (let i = 0; i < tokens.length; i++) {
      if (res.destroyed) return;
      if (i > 0) await sleep(gap);
      send({ ...base, choices: [{ index: 0, delta: { content: tokens[i] }, finish_reason: null }] });
    }
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (body.stream_options?.include_usage) send({ ...base, choices: [], usage });
    res.end('data: [DONE]\n\n');
  }

  async function embeddings(body: any, res: ServerResponse) {
    const inputs: string[] = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? '')];
    counts.embeddings++;
    counts.inputs += inputs.length;
    await sleep(t.embedMs);
    const dims = typeof body.dimensions === 'number' ? body.dimensions : 256;
    const base64 = body.encoding_format === 'base64';
    const data = inputs.map((text, index) => {
      const v = hashEmbedding(text, dims);
      return {
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : Array.from(v),
      };
    });
    const tokens = inputs.reduce((n, s) => n + Math.ceil(s.length / 4), 0);
    json(res, 200, {
      object: 'list',
      data,
      model: String(body.model),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  const server = createServer((req, res) => {
    counts.open++;
    res.on('close', () => counts.open--);
    void (async () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (req.method !== 'POST') return json(res, 404, { error: { message: 'not found' } });
      const body = JSON.parse(await readBody(req));
      if (path.endsWith('/chat/completions')) return chat(body, res);
      if (path.endsWith('/embeddings')) return embeddings(body, res);
      return json(res, 404, { error: { message: 'not found' } });
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: String(err) } });
      else res.end();
    });
  });
  return {
    counts,
    listen: () =>
      new Promise<string>((ok) =>
        server.listen(0, '127.0.0.1', () =>
          ok(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`),
        ),
      ),
  };
}

/** The environment that points a node at the server at `url`. */
export function modelEnv(url: string, dims: number): Record<string, string> {
  return {
    MODEL_BASE_URL: url,
    MODEL_API_KEY: 'fake-key',
    CHAT_MODEL: 'fake-chat',
    EMBEDDING_MODEL: 'fake-embed',
    VISION_MODEL: 'fake-vision',
    EMBEDDING_DIMENSIONS: String(dims),
  };
}

if (process.argv[1]?.endsWith('model-server.ts')) {
  const m = startModelServer(JSON.parse(process.argv[2] ?? '{}') as ModelTimes);
  const url = await m.listen();
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'stats') process.stdout.write(`${JSON.stringify({ stats: m.counts })}\n`);
  });
  process.stdin.on('end', () => process.exit(0));
}
