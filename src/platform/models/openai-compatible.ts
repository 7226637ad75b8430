// The remote provider: any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio, llama.cpp
// server) through the Vercel AI SDK, chosen by MODEL_BASE_URL, with separate chat, embedding and
// vision model names. One attempt per call: the SDK's own retries are off (maxRetries: 0) because
// the gateway retries, so every attempt is counted and recorded in one place.
import { createOpenAICompatible, type OpenAICompatibleProvider } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  embedMany,
  generateText,
  jsonSchema,
  streamText,
  tool,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import {
  ModelCallError,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type EmbedResult,
  type ModelProvider,
  type ToolCall,
  type ToolSpec,
  type VisionRequest,
  type VisionResult,
} from './provider.js';

export interface OpenAICompatibleOptions {
  baseUrl: string;
  apiKey: string | undefined;
  chatModel: string;
  embeddingModel: string;
  visionModel: string | undefined;
  embeddingDimensions: number | undefined;
}

function toModelMessages(messages: ChatMessage[]): ModelMessage[] {
  return messages.map((m): ModelMessage => {
    switch (m.role) {
      case 'system':
        return { role: 'system', content: m.content };
      case 'user':
        if (!m.images?.length) return { role: 'user', content: m.content };
        return {
          role: 'user',
          content: [
            { type: 'text', text: m.content },
            ...m.images.map((img) => ({ type: 'file' as const, data: img.data, mediaType: img.mediaType })),
          ],
        };
      case 'assistant':
        if (!m.toolCalls?.length) return { role: 'assistant', content: m.content };
        return {
          role: 'assistant',
          content: [
            ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
            ...m.toolCalls.map((c) => ({
              type: 'tool-call' as const,
              toolCallId: c.id,
              toolName: c.name,
              input: c.input,
            })),
          ],
        };
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: m.toolCallId,
              toolName: m.toolName,
              output: { type: 'json', value: (m.result ?? null) as never },
            },
          ],
        };
    }
  });
}

// Tools without `execute`: the SDK returns the model's tool calls and stops, and the caller
// (the chat turn) decides what to run, keeping to the spec's "at most two chat calls".
function toToolSet(tools: ToolSpec[] | undefined): ToolSet | undefined {
  if (!tools?.length) return undefined;
  return Object.fromEntries(tools.map((t) => [t.name, sdkTool(t)]));
}

// A spec's SDK tool, made once per spec object (a chat turn offers the same specs every time).
const sdkTools = new WeakMap<ToolSpec, ToolSet[string]>();
function sdkTool(spec: ToolSpec): ToolSet[string] {
  let made = sdkTools.get(spec);
  if (!made) {
    made = tool({ description: spec.description, inputSchema: jsonSchema(spec.parameters as never) });
    sdkTools.set(spec, made);
  }
  return made;
}

/** SDK errors → the gateway's retry vocabulary: 429, 408 and 5xx (and network failures) retry. */
export function classifyError(err: unknown): ModelCallError {
  if (err instanceof ModelCallError) return err;
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    const retryAfter = Number(err.responseHeaders?.['retry-after']);
    const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
    return new ModelCallError(
      `model server answered ${status ?? 'nothing'}: ${err.message}`,
      status,
      retryable,
      Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined,
      { cause: err },
    );
  }
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))
    return new ModelCallError('model call timed out', undefined, true, undefined, { cause: err });
  // Network failures (connection refused, reset) surface as TypeError from fetch: retry them.
  const retryable =
    err instanceof TypeError || (err instanceof Error && /fetch failed|ECONN|socket/i.test(err.message));
  return new ModelCallError(
    err instanceof Error ? err.message : String(err),
    undefined,
    retryable,
    undefined,
    { cause: err },
  );
}

export class OpenAICompatibleModels implements ModelProvider {
  readonly name = 'openai-compatible';
  readonly offline = false;
  readonly chatModel: string;
  readonly embeddingModel: string;
  readonly visionModel: string;
  readonly embeddingDimensions: number | undefined;
  private readonly provider: OpenAICompatibleProvider;
  // The SDK's model objects, made once: making one builds its response schemas (zod), which cost
  // more than a chat turn's own bookkeeping.
  private readonly chatModels = new Map<string, ReturnType<OpenAICompatibleProvider['chatModel']>>();
  private embedder: ReturnType<OpenAICompatibleProvider['embeddingModel']> | undefined;

  constructor(opts: OpenAICompatibleOptions) {
    this.chatModel = opts.chatModel;
    this.embeddingModel = opts.embeddingModel;
    this.visionModel = opts.visionModel ?? opts.chatModel;
    this.embeddingDimensions = opts.embeddingDimensions;
    this.provider = createOpenAICompatible({
      name: 'models',
      baseURL: opts.baseUrl.replace(/\/$/, ''),
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      includeUsage: true,
    });
  }

  private chatModelNamed(name: string) {
    let model = this.chatModels.get(name);
    if (!model) {
      model = this.provider.chatModel(name);
      this.chatModels.set(name, model);
    }
    return model;
  }

  private base(req: ChatRequest, signal: AbortSignal, model: string) {
    const tools = toToolSet(req.tools);
    return {
      model: this.chatModelNamed(model),
      ...(req.system ? { system: req.system } : {}),
      messages: toModelMessages(req.messages),
      ...(tools ? { tools, toolChoice: req.toolChoice ?? 'auto' } : {}),
      ...(req.maxOutputTokens ? { maxOutputTokens: req.maxOutputTokens } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      maxRetries: 0,
      abortSignal: signal,
    };
  }

  async chat(req: ChatRequest, signal: AbortSignal): Promise<ChatResult> {
    try {
      const r = await generateText(this.base(req, signal, this.chatModel));
      return {
        text: r.text,
        toolCalls: r.toolCalls.map((c): ToolCall => ({ id: c.toolCallId, name: c.toolName, input: c.input })),
        finishReason: r.finishReason,
        usage: { inputTokens: r.usage.inputTokens ?? 0, outputTokens: r.usage.outputTokens ?? 0 },
        provider: this.name,
        model: this.chatModel,
        offline: false,
      };
    } catch (err) {
      throw classifyError(err);
    }
  }

  async streamChat(
    req: ChatRequest,
    signal: AbortSignal,
    onDelta: (delta: string) => void,
  ): Promise<ChatResult> {
    let failure: unknown;
    const r = streamText({
      ...this.base(req, signal, this.chatModel),
      onError: ({ error }) => {
        failure = error;
      },
    });
    let text = '';
    const toolCalls: ToolCall[] = [];
    let finishReason = 'unknown';
    let usage = { inputTokens: 0, outputTokens: 0 };
    try {
      for await (const part of r.fullStream) {
        // Only these parts matter here; the SDK's other parts (steps, reasoning, sources) pass by.
        if (part.type === 'text-delta') {
          text += part.text;
          onDelta(part.text);
        } else if (part.type === 'tool-call') {
          toolCalls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
        } else if (part.type === 'finish') {
          finishReason = part.finishReason;
          usage = {
            inputTokens: part.totalUsage.inputTokens ?? 0,
            outputTokens: part.totalUsage.outputTokens ?? 0,
          };
        } else if (part.type === 'error') {
          failure = part.error;
        }
      }
    } catch (err) {
      failure ??= err;
    }
    if (failure !== undefined) {
      const e = classifyError(failure);
      // Text already streamed to the client cannot be taken back: such a failure is final.
      throw text ? new ModelCallError(e.message, e.status, false, undefined, { cause: failure }) : e;
    }
    return {
      text,
      toolCalls,
      finishReason,
      usage,
      provider: this.name,
      model: this.chatModel,
      offline: false,
    };
  }

  async embed(texts: string[], signal: AbortSignal): Promise<EmbedResult> {
    try {
      const r = await embedMany({
        model: (this.embedder ??= this.provider.embeddingModel(this.embeddingModel)),
        values: texts,
        ...(this.embeddingDimensions ? { dimensions: this.embeddingDimensions } : {}),
        maxRetries: 0,
        abortSignal: signal,
      });
      const dimensions = r.embeddings[0]?.length ?? this.embeddingDimensions ?? 0;
      if (this.embeddingDimensions && dimensions !== this.embeddingDimensions)
        throw new ModelCallError(
          `the embedding model returned ${dimensions} dimensions, EMBEDDING_DIMENSIONS says ${this.embeddingDimensions}`,
          undefined,
          false,
          undefined,
        );
      return {
        embeddings: r.embeddings,
        provider: this.name,
        model: this.embeddingModel,
        dimensions,
        usage: { inputTokens: r.usage.tokens ?? 0, outputTokens: 0 },
        offline: false,
      };
    } catch (err) {
      throw classifyError(err);
    }
  }

  async describeImage(req: VisionRequest, signal: AbortSignal): Promise<VisionResult> {
    try {
      const r = await generateText({
        model: this.chatModelNamed(this.visionModel),
        messages: toModelMessages([
          {
            role: 'user',
            content:
              req.prompt ??
              'Describe this image in detail: what it shows, any text in it, and anything notable.',
            images: [req.image],
          },
        ]),
        maxRetries: 0,
        abortSignal: signal,
      });
      return {
        text: r.text,
        usage: { inputTokens: r.usage.inputTokens ?? 0, outputTokens: r.usage.outputTokens ?? 0 },
        provider: this.name,
        model: this.visionModel,
        offline: false,
      };
    } catch (err) {
      throw classifyError(err);
    }
  }
}
