// The offline semantic embedder (`offline-glove-sif-v1`), the default embedding model when no
// model server is configured. A text's vector has two channels, each L2-normalised and weighted so
// that the cosine of two texts is a weighted sum of the two channels' cosines:
//   - meaning: the smooth-inverse-frequency average of its words' GloVe vectors (Arora et al.,
//     "A simple but tough-to-beat baseline for sentence embeddings", 2017): a word weighs
//     a / (a + p(w)), p(w) its frequency (estimated from its rank by Zipf's law, the source lists
//     words by frequency), so "the" and "I" count for almost nothing and "watercolour" for a lot;
//     then the component every text shares (the frequency-weighted mean of the word vectors) is
//     removed, so what is left is what sets a text apart. "She painted a lake" and "I finished a
//     watercolour of the sunrise" come close here without a word in common;
//   - surface form: the lexical embedder's hashed words, bigrams and character trigrams, so names,
//     numbers, typos and words outside the vocabulary still match themselves.
import { hashInto, tokenize } from './lexical-embedder.js';
import type { WordVectors } from './word-vectors.js';

export const SEMANTIC_EMBEDDING_MODEL = 'offline-glove-sif-v1';
export const SEMANTIC_DIMENSIONS = 384;
/** The word vectors' size: the meaning channel's. */
export const WORD_DIMENSIONS = 100;

export interface SemanticOptions {
  /** SIF's smoothing: larger flattens the weights. */
  a: number;
  /** The share of the cosine that comes from meaning (the rest from surface form). */
  meaning: number;
  /** Remove the common component. */
  removeCommon: boolean;
}

/** Less known weight than this (about half a content word) leaves the meaning channel empty. */
const MIN_KNOWN = 0.5;

export const DEFAULT_SEMANTIC: SemanticOptions = {
  a: 1e-3,
  meaning: 0.4,
  removeCommon: true,
};

export class SemanticEmbedder {
  readonly dims: number;
  /** A word's SIF weight, by rank. */
  private readonly weights: Float32Array;
  /** A word's SIF weight times its row's scale (the int8 values' factor), by rank. */
  private readonly rowFactors: Float64Array;
  private readonly common: Float32Array;

  constructor(
    private readonly words: WordVectors,
    dims = SEMANTIC_DIMENSIONS,
    private readonly opts: SemanticOptions = DEFAULT_SEMANTIC,
  ) {
    if (dims <= words.dims)
      throw new Error(`the semantic embedding needs more than ${words.dims} dimensions`);
    this.dims = dims;
    // Zipf: p(rank r) = 1 / ((r + 1) · H), H the harmonic number of the source's size.
    const harmonic = Math.log(words.sourceSize) + 0.5772;
    const n = words.scales.length;
    this.weights = new Float32Array(n);
    this.rowFactors = new Float64Array(n);
    const common = new Float64Array(words.dims);
    for (let r = 0; r < n; r++) {
      const p = 1 / ((r + 1) * harmonic);
      const w = opts.a / (opts.a + p);
      this.weights[r] = w;
      this.rowFactors[r] = words.scales[r]! * this.weights[r]!;
      const scale = words.scales[r]! * p * w;
      for (let i = 0; i < words.dims; i++) common[i]! += words.values[r * words.dims + i]! * scale;
    }
    this.common = normalise(Float32Array.from(common));
  }

  /** The text's embedding: `dims` values, L2-normalised. Both channels are written into the one
   * vector it returns (ingest embeds every memory: no array per channel). */
  embed(text: string): Float32Array {
    const { dims: d, index, values } = this.words;
    const out = new Float32Array(this.dims);
    const meaning = out.subarray(0, d);
    const tokens = tokenize(text);
    // The weight of the words the vectors know, and of those they do not (as rare as it gets).
    let known = 0;
    let unknown = 0;
    for (const w of tokens) {
      const r = index.get(w);
      if (r === undefined) {
        unknown += 1;
        continue;
      }
      known += this.weights[r]!;
      const scale = this.rowFactors[r]!;
      const base = r * d;
      for (let i = 0; i < d; i++) meaning[i]! += values[base + i]! * scale;
    }
    // Function words alone say nothing the surface form does not.
    const found = known >= MIN_KNOWN ? known / (known + unknown) : 0;
    if (found > 0 && this.opts.removeCommon) {
      let dot = 0;
      for (let i = 0; i < d; i++) dot += meaning[i]! * this.common[i]!;
      for (let i = 0; i < d; i++) meaning[i]! -= dot * this.common[i]!;
    }
    normalise(meaning);
    const form = hashInto(out.subarray(d), text, tokens);
    // The meaning channel speaks for the share of the text's weight its vectors know: without a
    // known word the text is its surface form alone.
    const m = Math.sqrt(this.opts.meaning * found);
    const f = Math.sqrt(1 - this.opts.meaning * found);
    for (let i = 0; i < d; i++) meaning[i] = meaning[i]! * m;
    for (let i = 0; i < form.length; i++) form[i] = form[i]! * f;
    return normalise(out);
  }
}

function normalise(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}
