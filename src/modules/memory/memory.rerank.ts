// The second stage of retrieval: the first stage (vector and full text, fused by RRF) names the
// candidates; this stage scores each by how well it answers the query's words, then lets a memory
// borrow relevance from the memories written just before and after it. Pure, table-tested in
// memory.rerank.test.ts; what each part gained on the LoCoMo development split is in
// bench/RESULTS.md.
//   - Word alignment: each content word of the query is matched with the memory's closest word
//     (1 when the same, else the cosine of their word vectors, counted from ALIGN_FLOOR and
//     squared, so "paint" finds "watercolour" and "kite" does not find "horse"), weighted by its
//     inverse document frequency among the reranked memories: a name said in every memory counts
//     for little, a rare word for much (full text ranks without it).
//   - Plus the cosine of the embeddings (the vector side's, when the chunk was among its
//     candidates; else the least of those, the most it can be).
//   - Neighbours: a conversation answers across turns ("who performed at the concert?" / "it was
//     Matt Patterson"), so a turn is read with the turns written just before and after it: a query
//     word matched only there counts CONTEXT_WEIGHT of its match, and the turn adds NEIGHBOUR_SHARE
//     of its better neighbour's score (a memory with no neighbour read stands on its own). A turn
//     just after a question ("How often do you all work out together?" / "Three times a week") is
//     read as its answer and ranks with it (ANSWER_SHARE).
import { contentWords, type WordSimilarity } from '../../platform/models/words.js';

/** Word cosines below this count as no match. */
const ALIGN_FLOOR = 0.3;
/** The weight of the embeddings' cosine beside the alignment (normalised to the best). */
const COSINE_WEIGHT = 1;
/** What a query word matched only in a neighbouring turn counts, against a match in the memory. */
const CONTEXT_WEIGHT = 0.7;
/** The share of the better neighbour's score a memory adds. */
const NEIGHBOUR_SHARE = 0.3;
/** A memory written just after one that asks (its last character a "?") is read as the answer: it
 * scores at least the mean of its own score and the question's, the question's score weighted
 * NEIGHBOUR_SHARE + ANSWER_SHARE. On LoCoMo's development split, 2, 3 and 5 give the same figures
 * (bench/RESULTS.md). */
const ANSWER_SHARE = 3;
const ASKS = /\?\s*$/;
/** Words of a memory considered (its first ones): bounds the cost of a very long memory. */
const MAX_DOC_WORDS = 400;

export interface RerankCandidate {
  memoryId: number;
  content: string;
  /** The embeddings' cosine, when the vector side ranked it. */
  cosine: number | undefined;
  /** The first stage's fused score in [0, 1] (breaks ties). */
  fused: number;
  /** The memories written just before and after it in its owner's timeline, when known. */
  previous?: number | undefined;
  next?: number | undefined;
}

export class Reranker {
  constructor(private readonly words: WordSimilarity) {}

  /** Each query word's weight: its inverse document frequency among the texts (BM25's form),
   * from how many of the `n` texts hold each distinct word. */
  static weights(query: string[], vocabulary: Map<string, number>, holding: Int32Array, n: number): number[] {
    return query.map((w) => {
      const i = vocabulary.get(w);
      const df = i === undefined ? 0 : holding[i]!;
      return Math.log(1 + (n - df + 0.5) / (df + 0.5));
    });
  }

  /** Each query word's best match in each text: row `i` of the result (its `query` entries from
   * `i * query`) is text `i`'s, the best of `similarity[k]` (query word `k`'s match with every
   * distinct word of the pool) over the text's words (indices into it). */
  static matches(similarity: Float64Array[], docs: number[][]): Float64Array {
    const q = similarity.length;
    const best = new Float64Array(docs.length * q);
    docs.forEach((doc, i) => {
      for (let k = 0; k < q; k++) {
        const s = similarity[k]!;
        let b = 0;
        for (const w of doc) if (s[w]! > b) b = s[w]!;
        best[i * q + k] = b;
      }
    });
    return best;
  }

  /** How well text `i` answers the query: the sum of its query words' weighted matches (those that
   * reach ALIGN_FLOOR), each the better of its own match and CONTEXT_WEIGHT of its neighbours'
   * (texts `around`, -1 for none). */
  static align(weights: number[], matched: Float64Array, i: number, around: number[]): number {
    const q = weights.length;
    let score = 0;
    for (let k = 0; k < q; k++) {
      let best = matched[i * q + k]!;
      for (const j of around) if (j >= 0) best = Math.max(best, CONTEXT_WEIGHT * matched[j * q + k]!);
      if (best >= ALIGN_FLOOR) score += weights[k]! * best * best;
    }
    return score;
  }

  /** The candidates rescored (and any neighbour that scored), best first, with a similarity in
   * [0, 1]. `neighbours` holds the content of the memories named around the candidates. */
  rerank(
    query: string,
    candidates: RerankCandidate[],
    neighbours: Map<number, { content: string; previous?: number | undefined; next?: number | undefined }>,
  ): { memoryId: number; similarity: number }[] {
    const words = contentWords(query, 32);
    const floor = Math.min(...candidates.flatMap((c) => (c.cosine === undefined ? [] : [c.cosine])), 1);
    // Every memory named once, by position (the neighbours, then the candidates), and each one's
    // neighbours by position (-1: not read).
    const texts: {
      id: number;
      content: string;
      previous?: number | undefined;
      next?: number | undefined;
      candidate?: RerankCandidate;
    }[] = [];
    const at = new Map<number, number>();
    const place = (id: number, text: (typeof texts)[number]) => {
      const i = at.get(id);
      if (i === undefined) at.set(id, texts.push(text) - 1);
      else texts[i] = text;
    };
    for (const [id, m] of neighbours) place(id, { id, ...m });
    for (const c of candidates) place(c.memoryId, { id: c.memoryId, ...c, candidate: c });
    const position = (id: number | undefined) => (id === undefined ? -1 : (at.get(id) ?? -1));
    const previous = texts.map((t) => position(t.previous));
    const next = texts.map((t) => position(t.next));
    // Every distinct word of the pool once: a pool repeats most of its words, so each query word
    // is matched with each distinct word once (1 for itself, else the cosine of their vectors).
    const vocabulary = new Map<string, number>();
    const docs = texts.map((t) =>
      contentWords(t.content, MAX_DOC_WORDS).map(
        (w) => vocabulary.get(w) ?? vocabulary.set(w, vocabulary.size).get(w)!,
      ),
    );
    const holding = new Int32Array(vocabulary.size);
    for (const doc of docs) for (const i of doc) holding[i]!++;
    // The pool stands in for the scope: a word in most of it (a name said in every turn) is
    // common, one in few of them is telling.
    const weights = Reranker.weights(words, vocabulary, holding, docs.length);
    const avg = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length) || 1;
    // Each distinct word's row in the word vectors (-1: none), looked up once (the table is large).
    const pool = new Int32Array(vocabulary.size);
    for (const [w, i] of vocabulary) pool[i] = this.words.rank(w) ?? -1;
    const similarity = words.map((w) => {
      const s = new Float64Array(pool.length);
      const q = this.words.rank(w);
      if (q !== undefined) this.words.cosines(q, pool, s);
      // A word outside the vocabulary still matches itself.
      const self = vocabulary.get(w);
      if (self !== undefined) s[self] = 1;
      return s;
    });
    const matched = Reranker.matches(similarity, docs);
    const raw = docs.map(
      (doc, i) =>
        Reranker.align(weights, matched, i, [previous[i]!, next[i]!]) /
        (0.25 + (0.75 * doc.length) / avg) ** 0.3,
    );
    const best = Math.max(0, ...raw);
    // A memory's own score in [0, 1]: its alignment relative to the best, with the cosine when the
    // vector side took part.
    const vector = candidates.some((c) => c.cosine !== undefined);
    const own = texts.map((t, i) => {
      const aligned = best > 0 ? raw[i]! / best : 0;
      const cosine = Math.max(0, t.candidate?.cosine ?? floor);
      return vector ? (aligned + COSINE_WEIGHT * cosine) / (1 + COSINE_WEIGHT) : aligned;
    });
    const out = texts.map((t, i) => {
      const s = own[i]!;
      const p = previous[i]!;
      const n = next[i]!;
      const around = Math.max(p >= 0 ? own[p]! : -1, n >= 0 ? own[n]! : -1);
      let similarity = around >= 0 ? (s + NEIGHBOUR_SHARE * around) / (1 + NEIGHBOUR_SHARE) : s;
      if (p >= 0 && ASKS.test(texts[p]!.content)) {
        const weight = NEIGHBOUR_SHARE + ANSWER_SHARE;
        similarity = Math.max(similarity, (s + weight * own[p]!) / (1 + weight));
      }
      return { memoryId: t.id, similarity: Math.min(1, similarity), fused: t.candidate?.fused ?? 0 };
    });
    return out
      .sort((a, b) => b.similarity - a.similarity || b.fused - a.fused || b.memoryId - a.memoryId)
      .map(({ memoryId, similarity }) => ({ memoryId, similarity }));
  }
}
