// The offline models, used when no MODEL_BASE_URL is configured, so `npm start` works on a fresh
// machine with no model server (the offline default).
//
// Embedder: by name (OFFLINE_EMBEDDING_MODEL). The default is the semantic embedder
// (semantic-embedder.ts: word vectors a registry package ships, weighted by smooth inverse
// frequency, with a hashed channel for surface form); the lexical one (lexical-embedder.ts) stays
// selectable. A change between them re-embeds the stored memories in the background.
//
// Chat: no language model runs locally. The offline chat model answers from what the prompt was
// built from (ChatRequest.grounding): the retrieved statements that bear on the question, with
// when they were said, in the protocol's tone, or plainly that it does not remember
// (offline-answer.ts). It never calls tools. Every result says `offline: true`, and
// /api/admin/health reports the provider as offline.
import { hashEmbedding, LEXICAL_EMBEDDING_MODEL } from './lexical-embedder.js';
import { offlineAnswer } from './offline-answer.js';
import { SEMANTIC_EMBEDDING_MODEL, SemanticEmbedder, WORD_DIMENSIONS } from './semantic-embedder.js';
import { loadWordVectors } from './word-vectors.js';
import { loadWordSimilarity } from './words.js';
import {
  approxTokens,
  type ChatRequest,
  type ChatResult,
  type EmbedResult,
  type ModelProvider,
  type VisionRequest,
  type VisionResult,
} from './provider.js';

export const OFFLINE_EMBEDDING_MODELS = [SEMANTIC_EMBEDDING_MODEL, LEXICAL_EMBEDDING_MODEL] as const;
export type OfflineEmbeddingModel = (typeof OFFLINE_EMBEDDING_MODELS)[number];
export const OFFLINE_CHAT_MODEL = 'offline-grounded-v1';
export const OFFLINE_DIMENSIONS = 384;

function lastUserText(req: ChatRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === 'user') return m.content;
  }
  return '';
}

export class OfflineProvider implements ModelProvider {
  readonly name = 'offline';
  readonly offline = true;
  readonly chatModel = OFFLINE_CHAT_MODEL;
  readonly visionModel = 'offline-vision-v1';
  private semantic: Promise<SemanticEmbedder> | undefined;

  constructor(
    readonly embeddingDimensions: number = OFFLINE_DIMENSIONS,
    readonly embeddingModel: OfflineEmbeddingModel = SEMANTIC_EMBEDDING_MODEL,
  ) {
    if (embeddingModel === SEMANTIC_EMBEDDING_MODEL && embeddingDimensions <= WORD_DIMENSIONS)
      throw new Error(
        `EMBEDDING_DIMENSIONS must be more than ${WORD_DIMENSIONS} for ${SEMANTIC_EMBEDDING_MODEL} (or set OFFLINE_EMBEDDING_MODEL=${LEXICAL_EMBEDDING_MODEL})`,
      );
  }

  /** The text embedder of the configured model (the word vectors are read on first use). */
  private async embedder(): Promise<(text: string) => Float32Array> {
    if (this.embeddingModel === LEXICAL_EMBEDDING_MODEL)
      return (text) => hashEmbedding(text, this.embeddingDimensions);
    if (!this.semantic) {
      this.semantic = loadWordVectors().then(
        (words) => new SemanticEmbedder(words, this.embeddingDimensions),
      );
      this.semantic.catch(() => (this.semantic = undefined));
    }
    const embedder = await this.semantic;
    return (text) => embedder.embed(text);
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const input = lastUserText(req);
    const words = await loadWordSimilarity();
    const text = offlineAnswer(input, req.grounding?.memories ?? [], req.grounding?.tone ?? 'PUBLIC', {
      words,
      speakerName: req.grounding?.speakerName,
    });
    const prompt = [
      req.system ?? '',
      ...req.messages.map((m) => ('content' in m ? m.content : JSON.stringify(m.result))),
    ].join('\n');
    return {
      text,
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: approxTokens(prompt), outputTokens: approxTokens(text) },
      provider: this.name,
      model: this.chatModel,
      offline: true,
    };
  }

  async streamChat(
    req: ChatRequest,
    signal: AbortSignal,
    onDelta: (delta: string) => void,
  ): Promise<ChatResult> {
    const result = await this.chat(req);
    // Word by word, so clients exercise the same streaming path as with a real model.
    for (const piece of result.text.match(/\S+\s*/g) ?? []) {
      if (signal.aborted) break;
      onDelta(piece);
    }
    return result;
  }

  async embed(texts: string[]): Promise<EmbedResult> {
    const embed = await this.embedder();
    return {
      embeddings: texts.map((t) => embed(t)),
      provider: this.name,
      model: this.embeddingModel,
      dimensions: this.embeddingDimensions,
      usage: { inputTokens: texts.reduce((n, t) => n + approxTokens(t), 0), outputTokens: 0 },
      offline: true,
    };
  }

  async describeImage(req: VisionRequest): Promise<VisionResult> {
    // No local vision model: say plainly what is known, so nothing pretends to have seen the image.
    const text = `[offline: no vision model configured] An image (${req.image.mediaType}, ${req.image.data.byteLength} bytes) was attached; its content was not analysed.`;
    return {
      text,
      usage: { inputTokens: 0, outputTokens: approxTokens(text) },
      provider: this.name,
      model: this.visionModel,
      offline: true,
    };
  }
}
