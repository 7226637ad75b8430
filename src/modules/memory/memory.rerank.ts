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
//   - Neighbours: a conversation answers across turns ("what did you paint?" / "a lake at
//     sunrise"), so a memory adds NEIGHBOUR_SHARE of its better neighbour's score (a memory with
//     no neighbour read stands on its own score).
import { contentWords, type WordSimilarity } from '../../platform/models/words.js';

/** Word cosines below this count as no match. */
const ALIGN_FLOOR = 0.3;
/** The weight of the embeddings' cosine beside the alignment (normalised to the best). */
const COSINE_WEIGHT = 1;
/** The share of the better neighbour's score a memory adds. */
const NEIGHBOUR_SHARE = 0.6;
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

  /** Each query word's weight: its inverse document frequency among the texts (BM25's form). */
  static weights(query: string[], docs: string[][]): number[] {
    const n = docs.length;
    return query.map((w) => {
      const df = docs.filter((d) => d.includes(w)).length;
      return Math.log(1 + (n - df + 0.5) / (df + 0.5));
    });
  }

  /** How well a text's words answer the query's (the sum of weighted word matches: each query
   * word's best match among the text's words, when it reaches ALIGN_FLOOR). */
  static align(matchers: ((word: string) => number)[], weights: number[], doc: string[]): number {
    let score = 0;
    matchers.forEach((match, k) => {
      let best = 0;
      for (const w of doc) best = Math.max(best, match(w));
      if (best >= ALIGN_FLOOR) score += weights[k]! * best * best;
    });
    return score;
  }

  /** The candidates rescored (and any neighbour that scored), best first, with a similarity in
   * [0, 1]. `texts` holds the content of every memory named, candidates and neighbours. */
  rerank(
    query: string,
    candidates: RerankCandidate[],
    neighbours: Map<number, { content: string; previous?: number | undefined; next?: number | undefined }>,
  ): { memoryId: number; similarity: number }[] {
    const words = contentWords(query, 32);
    const floor = Math.min(...candidates.flatMap((c) => (c.cosine === undefined ? [] : [c.cosine])), 1);
    const byId = new Map(candidates.map((c) => [c.memoryId, c]));
    const all = new Map<
      number,
      { content: string; previous?: number | undefined; next?: number | undefined }
    >([...neighbours, ...candidates.map((c) => [c.memoryId, c] as const)]);
    const docs = new Map([...all].map(([id, m]) => [id, contentWords(m.content, MAX_DOC_WORDS)]));
    // The pool stands in for the scope: a word in most of it (a name said in every turn) is
    // common, one in few of them is telling.
    const weights = Reranker.weights(words, [...docs.values()]);
    const avg = [...docs.values()].reduce((n, d) => n + d.length, 0) / Math.max(1, docs.size) || 1;
    const matchers = words.map((w) => this.words.matcher(w));
    let best = 0;
    const raw = new Map<number, number>();
    for (const [id, doc] of docs) {
      const s = Reranker.align(matchers, weights, doc) / (0.25 + (0.75 * doc.length) / avg) ** 0.3;
      raw.set(id, s);
      best = Math.max(best, s);
    }
    // A memory's own score in [0, 1]: its alignment relative to the best, with the cosine when the
    // vector side took part.
    const vector = candidates.some((c) => c.cosine !== undefined);
    const own = new Map<number, number>();
    for (const [id, s] of raw) {
      const aligned = best > 0 ? s / best : 0;
      const cosine = Math.max(0, byId.get(id)?.cosine ?? floor);
      own.set(id, vector ? (aligned + COSINE_WEIGHT * cosine) / (1 + COSINE_WEIGHT) : aligned);
    }
    const out: { memoryId: number; similarity: number; fused: number }[] = [];
    for (const [id, s] of own) {
      const m = all.get(id)!;
      const around = [m.previous, m.next].flatMap((n) =>
        n !== undefined && own.has(n) ? [own.get(n)!] : [],
      );
      const similarity =
        around.length > 0 ? (s + NEIGHBOUR_SHARE * Math.max(...around)) / (1 + NEIGHBOUR_SHARE) : s;
      out.push({ memoryId: id, similarity: Math.min(1, similarity), fused: byId.get(id)?.fused ?? 0 });
    }
    return out
      .sort((a, b) => b.similarity - a.similarity || b.fused - a.fused || b.memoryId - a.memoryId)
      .map(({ memoryId, similarity }) => ({ memoryId, similarity }));
  }
}
