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

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(s: string, h: number = FNV_OFFSET): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h;
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
  // A feature is hashed twice with FNV-1a: its text picks the dimension, and '~' + its text the
  // sign (a second hash, so collisions cancel out on average instead of piling up). Both hashes
  // run along the feature's pieces without building its string: `h` and `g` are the two states.
  const add = (h: number, g: number, weight: number) => {
    v[(h >>> 0) % dims]! += (g & 1 ? 1 : -1) * weight;
  };
  const words = tokenize(text);
  if (words.length === 0) {
    const f = '∅' + text.trim();
    add(fnv1a(f), fnv1a(f, TILDE), 1);
  }
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const stop = STOP_WORDS.has(w);
    // 'w:' + w
    const wh = fnv1a(w, W_H);
    const wg = fnv1a(w, W_G);
    add(wh, wg, stop ? 0.15 : 1);
    const next = words[i + 1];
    if (next !== undefined && !(stop && STOP_WORDS.has(next))) {
      // 'b:' + w + ' ' + next
      add(fnv1a(next, fnv1a(' ', fnv1a(w, B_H))), fnv1a(next, fnv1a(' ', fnv1a(w, B_G))), 0.5);
    }
    if (!stop && w.length > 2) {
      // 'c:' + each three characters of '<' + w + '>'; trigrams share one unit of weight per
      // word, so long words do not dominate.
      const grams = w.length;
      const weight = 1.2 / Math.sqrt(grams);
      for (let j = 0; j < grams; j++) {
        const c0 = j === 0 ? 60 : w.charCodeAt(j - 1); // '<'
        const c1 = w.charCodeAt(j);
        const c2 = j + 1 < w.length ? w.charCodeAt(j + 1) : 62; // '>'
        add(
          Math.imul(Math.imul(Math.imul(C_H ^ c0, FNV_PRIME) ^ c1, FNV_PRIME) ^ c2, FNV_PRIME),
          Math.imul(Math.imul(Math.imul(C_G ^ c0, FNV_PRIME) ^ c1, FNV_PRIME) ^ c2, FNV_PRIME),
          weight,
        );
      }
    }
  }
  let norm = 0;
  for (let i = 0; i < dims; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
  return v;
}

// The two hash states after each feature kind's prefix.
const TILDE = fnv1a('~');
const W_H = fnv1a('w:');
const W_G = fnv1a('w:', TILDE);
const B_H = fnv1a('b:');
const B_G = fnv1a('b:', TILDE);
const C_H = fnv1a('c:');
const C_G = fnv1a('c:', TILDE);

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

/** A plain array of the values (Array.from walks a typed array through its iterator: slower than
 * the embedding itself). */
function toNumbers(f: Float32Array): number[] {
  const out = new Array<number>(f.length);
  for (let i = 0; i < f.length; i++) out[i] = f[i]!;
  return out;
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
      embeddings: texts.map((t) => toNumbers(hashEmbedding(t, this.embeddingDimensions))),
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
