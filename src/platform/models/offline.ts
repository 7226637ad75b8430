// The offline models, used when no MODEL_BASE_URL is configured, so `npm start` works on a fresh
// machine with no model server (issue 3, "the offline default").
//
// Embedder: feature hashing. Words, word bigrams and character trigrams of each word are hashed
// (FNV-1a) into a fixed number of dimensions with a hashed sign, weighted (stop words low,
// bigrams above trigrams), and L2-normalised, so cosine similarity is a dot product.
// Quality, honestly: it is lexical. It matches shared words, word order (bigrams) and spelling
// variants and inflections (trigrams: "colour"/"colours", "remember"/"remembered"), but knows no
// synonyms ("car" and "automobile" are unrelated) and no meaning beyond surface form. Collisions
// add a little noise (with 384 dimensions a short memory has a few dozen features). It is a real
// retrieval signal that fuses well with full text, not a semantic model.
//
// Chat: no language model runs locally. The offline chat model answers from what the prompt was
// built from (ChatRequest.grounding): it picks the retrieved memory sentences closest to the
// user's words and phrases them in the protocol's tone. It never calls tools. Every result says
// `offline: true`, and /api/admin/health reports the provider as offline.
import {
  approxTokens,
  type ChatRequest,
  type ChatResult,
  type EmbedResult,
  type ModelProvider,
  type ProtocolTone,
  type VisionRequest,
  type VisionResult,
} from './provider.js';

export const OFFLINE_EMBEDDING_MODEL = 'offline-hash-ngram-v1';
export const OFFLINE_CHAT_MODEL = 'offline-grounded-v1';
export const OFFLINE_DIMENSIONS = 384;

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by do does did for from has have had he her his i if in into is it its me my no not of on or our ' +
    'she so that the their them they this to was we were what when where which who why will with you your'
  ).split(' '),
);

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function tokenize(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** The offline embedding of a text: deterministic, L2-normalised, `dims` long. */
export function hashEmbedding(text: string, dims: number = OFFLINE_DIMENSIONS): Float32Array {
  const v = new Float32Array(dims);
  const add = (feature: string, weight: number) => {
    const h = fnv1a(feature);
    // The sign comes from a second hash, so collisions cancel out on average instead of piling up.
    const sign = fnv1a('~' + feature) & 1 ? 1 : -1;
    v[h % dims]! += sign * weight;
  };
  const words = tokenize(text);
  if (words.length === 0) add('∅' + text.trim(), 1);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const stop = STOP_WORDS.has(w);
    add('w:' + w, stop ? 0.15 : 1);
    if (i + 1 < words.length && !(stop && STOP_WORDS.has(words[i + 1]!)))
      add('b:' + w + ' ' + words[i + 1], 0.5);
    if (!stop && w.length > 2) {
      const padded = `<${w}>`;
      const grams = padded.length - 2;
      // Trigrams share one unit of weight per word, so long words do not dominate.
      for (let j = 0; j < grams; j++) add('c:' + padded.slice(j, j + 3), 1.2 / Math.sqrt(grams));
    }
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
  return v;
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

// spec: "Tone of each protocol". PRIVATE intimate and emotional; TECH technical, no emotional
// language; NEUTRAL brief; SYSTEM meta-consciousness; PUBLIC professional and friendly.
const TONE: Record<ProtocolTone, { found: (facts: string) => string; none: string; max: number }> = {
  PRIVATE: {
    found: (f) => `I remember this, and it matters to me: ${f}`,
    none: "I don't hold a memory about that yet, but I'm here and I want to hear more.",
    max: 3,
  },
  TECH: { found: (f) => `Relevant context: ${f}`, none: 'No stored context matches this query.', max: 3 },
  NEUTRAL: { found: (f) => f, none: 'I have nothing on that.', max: 1 },
  SYSTEM: {
    found: (f) => `Across the unified memory I observe: ${f}`,
    none: 'The unified memory holds no record that matches this.',
    max: 3,
  },
  PUBLIC: {
    found: (f) => `Here is what I know: ${f}`,
    none: "I'm sorry, I don't have information about that yet. Could you tell me more?",
    max: 2,
  },
  CUSTOM: {
    found: (f) => `Here is what I know: ${f}`,
    none: "I don't have information about that yet.",
    max: 2,
  },
};

/** The offline answer: the memory sentences closest to the input, in the protocol's tone. */
export function offlineAnswer(input: string, memories: string[], tone: ProtocolTone = 'PUBLIC'): string {
  const style = TONE[tone];
  const q = hashEmbedding(input);
  const qWords = new Set(tokenize(input).filter((w) => !STOP_WORDS.has(w)));
  const scored = memories
    .flatMap((m, rank) => sentences(m).map((s) => ({ s, rank })))
    .map(({ s, rank }) => {
      const overlap = tokenize(s).filter((w) => qWords.has(w)).length;
      // Retrieval order is a signal too: earlier memories were judged more relevant.
      return { s, score: cosine(q, hashEmbedding(s)) + 0.1 * overlap - 0.01 * rank, overlap };
    })
    .filter((x) => x.overlap > 0 || x.score > 0.35)
    .sort((a, b) => b.score - a.score);
  // Only sentences about as relevant as the best one: a weak match is noise, not an answer.
  const best = scored[0]?.score ?? 0;
  const picked: string[] = [];
  for (const { s } of scored.filter((x) => x.score >= best * 0.5)) {
    if (picked.length >= style.max) break;
    if (!picked.includes(s)) picked.push(s);
  }
  if (picked.length === 0) return style.none;
  return style.found(picked.map((s) => (/[.!?]$/.test(s) ? s : s + '.')).join(' '));
}

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
  readonly embeddingModel = OFFLINE_EMBEDDING_MODEL;
  readonly visionModel = 'offline-vision-v1';

  constructor(readonly embeddingDimensions: number = OFFLINE_DIMENSIONS) {}

  async chat(req: ChatRequest): Promise<ChatResult> {
    const input = lastUserText(req);
    const text = offlineAnswer(input, req.grounding?.memories ?? [], req.grounding?.tone ?? 'PUBLIC');
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
    return {
      embeddings: texts.map((t) => Array.from(hashEmbedding(t, this.embeddingDimensions))),
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
