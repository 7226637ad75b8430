// One interface for every model the service uses: chat (tool calls, streamed text), batched
// embeddings and vision (ARCHITECTURE.md "Models"). Two providers implement it: the
// OpenAI-compatible one (OpenAI, Ollama, vLLM, LM Studio, llama.cpp server, by base URL) and the
// offline one, the default when no MODEL_BASE_URL is set. Callers never talk to a provider
// directly: the ModelGateway (gateway.ts) adds timeouts, retries, a concurrency limit and a
// record of every call.

/** The tone of each protocol (spec: "Tone of each protocol"); the offline chat model speaks in it. */
export type ProtocolTone = 'PRIVATE' | 'TECH' | 'NEUTRAL' | 'SYSTEM' | 'PUBLIC' | 'CUSTOM';

export interface ImageInput {
  /** The image bytes: never a URL, which the SDK would fetch outside our SSRF guard. */
  data: Uint8Array;
  mediaType: string;
}

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: ImageInput[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; result: unknown };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (z.toJSONSchema(schema) of the one zod schema per shape). */
  parameters: Record<string, unknown>;
}

export interface GroundingMemory {
  content: string;
  /** When it was stored (ISO 8601): the offline model says when a fact was told. */
  createdAt?: string | undefined;
}

/** What the prompt was built from, in structured form. Remote models read the prompt; the offline
 * model answers from this (it cannot read a prompt the way a language model does). */
export interface Grounding {
  /** Retrieved memories, most relevant first. */
  memories?: GroundingMemory[];
  tone?: ProtocolTone;
  /** Who is speaking (the assistant or an NPC). */
  speakerName?: string;
}

export interface ChatRequest {
  /** Why the call is made ("chat.turn", "training.synthesis"…); recorded with the call. */
  purpose: string;
  system?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  toolChoice?: 'auto' | 'none' | 'required';
  maxOutputTokens?: number;
  temperature?: number;
  grounding?: Grounding;
  signal?: AbortSignal;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ChatResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: Usage;
  provider: string;
  model: string;
  /** True when the offline model answered: say so in the response metadata. */
  offline: boolean;
}

/** An embedding's values: a model server's numbers as parsed, or the offline embedder's float32
 * array as it made it (ingest stores them without a copy). */
export type EmbeddingValues = number[] | Float32Array;

export interface EmbedResult {
  embeddings: EmbeddingValues[];
  provider: string;
  model: string;
  dimensions: number;
  usage: Usage;
  offline: boolean;
}

export interface VisionRequest {
  purpose: string;
  image: ImageInput;
  prompt?: string;
  signal?: AbortSignal;
}

export interface VisionResult {
  text: string;
  usage: Usage;
  provider: string;
  model: string;
  offline: boolean;
}

/** One attempt against one backend; retries, limits and records live in the gateway. */
export interface ModelProvider {
  readonly name: string;
  readonly offline: boolean;
  readonly chatModel: string;
  readonly embeddingModel: string;
  readonly visionModel: string;
  /** The embedding size when known before a call (offline, or EMBEDDING_DIMENSIONS). */
  readonly embeddingDimensions: number | undefined;
  chat(req: ChatRequest, signal: AbortSignal): Promise<ChatResult>;
  /** Like chat, calling onDelta with each piece of text as it arrives. */
  streamChat(req: ChatRequest, signal: AbortSignal, onDelta: (delta: string) => void): Promise<ChatResult>;
  embed(texts: string[], signal: AbortSignal): Promise<EmbedResult>;
  describeImage(req: VisionRequest, signal: AbortSignal): Promise<VisionResult>;
}

/** An error from the backend with what the retry policy needs to know. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    public readonly status: number | undefined,
    public readonly retryable: boolean,
    public readonly retryAfterMs: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ModelCallError';
  }
}

/** A rough token count for backends that report none (offline): about four characters a token. */
export const approxTokens = (text: string) => Math.ceil(text.length / 4);
