// The remote provider: any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio, llama.cpp
// server) through the AI SDK's OpenAI-compatible provider, chosen by MODEL_BASE_URL, with separate
// chat, embedding and vision model names. The calls go to the provider's model objects through
// their public interface (`doGenerate`, `doStream`, `doEmbed`, the AI SDK's provider
// specification): the `ai` package's generateText/streamText add multi-step runs, tool execution,
// telemetry and stream transforms this service uses none of, at more CPU than the call's own
// work (bench/RESULTS.md). One attempt per call: the gateway retries, so every attempt is counted
// and recorded in one place.
import { createOpenAICompatible, type OpenAICompatibleProvider } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4FunctionTool,
  type LanguageModelV4Message,
  type LanguageModelV4Prompt,
  type LanguageModelV4ToolCall,
  type LanguageModelV4Usage,
} from '@ai-sdk/provider';
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

/** The request's messages in the provider's prompt form (as the `ai` package would convert them). */
function toPrompt(system: string | undefined, messages: ChatMessage[]): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) prompt.push(toProviderMessage(m));
  return prompt;
}

function toProviderMessage(m: ChatMessage): LanguageModelV4Message {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return {
        role: 'user',
        content: [
          { type: 'text', text: m.content },
          ...(m.images ?? []).map((img) => ({
            type: 'file' as const,
            data: { type: 'data' as const, data: img.data },
            mediaType: img.mediaType,
          })),
        ],
      };
    case 'assistant':
      if (!m.toolCalls?.length) return { role: 'assistant', content: [{ type: 'text', text: m.content }] };
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
}

// Tools as function definitions (their JSON Schema): the model's calls come back and the caller
// (the chat turn) decides what to run, keeping to the spec's "at most two chat calls". Made once
// per spec object (a chat turn offers the same specs every time).
const functionTools = new WeakMap<ToolSpec, LanguageModelV4FunctionTool>();
function functionTool(spec: ToolSpec): LanguageModelV4FunctionTool {
  let made = functionTools.get(spec);
  if (!made) {
    made = { type: 'function', name: spec.name, description: spec.description, inputSchema: spec.parameters };
    functionTools.set(spec, made);
  }
  return made;
}

/** A tool call's arguments: the model's JSON text parsed (empty: no arguments). Text that does not
 * parse stays text, for the tool's own validation to refuse: a model's output is untrusted. */
function toToolCall(c: LanguageModelV4ToolCall): ToolCall {
  let input: unknown = c.input;
  try {
    input = c.input.trim() === '' ? {} : JSON.parse(c.input);
  } catch {
    // kept as text
  }
  return { id: c.toolCallId, name: c.toolName, input };
}

function usageOf(u: LanguageModelV4Usage) {
  return { inputTokens: u.inputTokens.total ?? 0, outputTokens: u.outputTokens.total ?? 0 };
}

function textOf(content: LanguageModelV4Content[]): string {
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
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
  // The provider's model objects, made once: making one builds its response schemas (zod), which
  // cost more than a chat turn's own bookkeeping.
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

  private callOptions(req: ChatRequest, signal: AbortSignal): LanguageModelV4CallOptions {
    return {
      prompt: toPrompt(req.system, req.messages),
      ...(req.tools?.length
        ? { tools: req.tools.map(functionTool), toolChoice: { type: req.toolChoice ?? 'auto' } }
        : {}),
      ...(req.maxOutputTokens ? { maxOutputTokens: req.maxOutputTokens } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      abortSignal: signal,
    };
  }

  async chat(req: ChatRequest, signal: AbortSignal): Promise<ChatResult> {
    try {
      const r = await this.chatModelNamed(this.chatModel).doGenerate(this.callOptions(req, signal));
      return {
        text: textOf(r.content),
        toolCalls: r.content.flatMap((p) => (p.type === 'tool-call' ? [toToolCall(p)] : [])),
        finishReason: r.finishReason.unified,
        usage: usageOf(r.usage),
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
    let text = '';
    const toolCalls: ToolCall[] = [];
    let finishReason = 'unknown';
    let usage = { inputTokens: 0, outputTokens: 0 };
    try {
      const { stream } = await this.chatModelNamed(this.chatModel).doStream(this.callOptions(req, signal));
      for await (const part of stream) {
        // Only these parts matter here; the others (stream start, metadata, tool input pieces,
        // reasoning, sources) pass by.
        if (part.type === 'text-delta') {
          text += part.delta;
          onDelta(part.delta);
        } else if (part.type === 'tool-call') {
          toolCalls.push(toToolCall(part));
        } else if (part.type === 'finish') {
          finishReason = part.finishReason.unified;
          usage = usageOf(part.usage);
        } else if (part.type === 'error') {
          failure ??= part.error;
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
      // One request: a batch is at most MEMORY_EMBED_BATCH (2,048) texts, the provider's limit.
      const r = await (this.embedder ??= this.provider.embeddingModel(this.embeddingModel)).doEmbed({
        values: texts,
        ...(this.embeddingDimensions ? { dimensions: this.embeddingDimensions } : {}),
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
        usage: { inputTokens: r.usage?.tokens ?? 0, outputTokens: 0 },
        offline: false,
      };
    } catch (err) {
      throw classifyError(err);
    }
  }

  async describeImage(req: VisionRequest, signal: AbortSignal): Promise<VisionResult> {
    try {
      const r = await this.chatModelNamed(this.visionModel).doGenerate({
        prompt: toPrompt(undefined, [
          {
            role: 'user',
            content:
              req.prompt ??
              'Describe this image in detail: what it shows, any text in it, and anything notable.',
            images: [req.image],
          },
        ]),
        abortSignal: signal,
      });
      return {
        text: textOf(r.content),
        usage: usageOf(r.usage),
        provider: this.name,
        model: this.visionModel,
        offline: false,
      };
    } catch (err) {
      throw classifyError(err);
    }
  }
}
