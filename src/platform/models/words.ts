// Words as the offline models read them: the content words of a text, and how close words are
// in meaning (the cosines of their word vectors) and how common a word is (its frequency rank).
// Used by memory retrieval's reranker and by the offline chat model's answer.
import { WordDots } from './word-dots.js';
import { loadWordVectors, type WordVectors } from './word-vectors.js';

/** English function words: they carry no topic. */
export const FUNCTION_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves s t d ll m re ve'
  ).split(' '),
);

/** The content words of a text, lower-cased, each once, in order (at most `max`). */
export function contentWords(text: string, max = 400): string[] {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (!FUNCTION_WORDS.has(w)) out.add(w);
    if (out.size >= max) break;
  }
  return [...out];
}

export class WordSimilarity {
  private readonly norms: Float64Array;
  /** The WebAssembly kernel for many products at once, made on first use (it copies the vectors). */
  private kernel: WordDots | undefined;

  constructor(private readonly words: WordVectors) {
    this.norms = new Float64Array(words.scales.length).fill(-1);
  }

  /** The word's frequency rank in the vectors' source (0: the most frequent); undefined for a
   * word outside the vocabulary. */
  rank(word: string): number | undefined {
    return this.words.index.get(word);
  }

  /** The rarity of a word, as an inverse document frequency estimated from its rank (Zipf's law):
   * a word outside the vocabulary is rarer than any in it. */
  rarity(word: string): number {
    const r = this.rank(word) ?? this.words.sourceSize;
    return Math.log(r + 2);
  }

  /** One word's cosine with each of `rows` (-1: a word outside the vocabulary, 0), into `out`. */
  cosines(a: number, rows: Int32Array, out: Float64Array): void {
    (this.kernel ??= new WordDots(this.words)).dots(a, rows, out);
    const na = this.norm(a);
    for (let i = 0; i < rows.length; i++) {
      const b = rows[i]!;
      const n = b < 0 ? 0 : na * this.norm(b);
      out[i] = b === a ? 1 : n > 0 ? out[i]! / n : 0;
    }
  }

  /** A row's norm, computed once. Kept in float64, so a cosine is the same on its first
   * computation and every later one. */
  private norm(row: number): number {
    let n = this.norms[row]!;
    if (n >= 0) return n;
    const { dims, values } = this.words;
    n = 0;
    for (let i = row * dims; i < (row + 1) * dims; i++) n += values[i]! * values[i]!;
    n = Math.sqrt(n);
    this.norms[row] = n;
    return n;
  }
}

let loaded: Promise<WordSimilarity> | undefined;

/** The word similarity over the shared word vectors, made once per process. */
export function loadWordSimilarity(): Promise<WordSimilarity> {
  if (!loaded) {
    loaded = loadWordVectors().then((w) => new WordSimilarity(w));
    loaded.catch(() => (loaded = undefined));
  }
  return loaded;
}

/** A light English stemmer: the common inflections (-s, -es, -ed, -ing, -ly) off words longer
 * than four letters, so "painting", "painted" and "paints" meet "paint". */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  return word.replace(/(?:ing|edly|ed|ies|es|s|ly)$/, (m) => (m === 'ies' ? 'y' : ''));
}
