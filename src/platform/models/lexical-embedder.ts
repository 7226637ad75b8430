// The lexical embedder (`offline-hash-ngram-v1`): feature hashing. Words, word bigrams and
// character trigrams of each word are hashed (FNV-1a) into a fixed number of dimensions with a
// hashed sign, weighted (stop words low, bigrams above trigrams), and L2-normalised, so cosine
// similarity is a dot product. It matches shared words, word order (bigrams) and spelling variants
// and inflections (trigrams: "colour"/"colours", "remember"/"remembered"), but knows no synonyms.
// The semantic embedder (semantic-embedder.ts) uses it as its channel for surface form; on its own
// it stays selectable by name (OFFLINE_EMBEDDING_MODEL).

export const LEXICAL_EMBEDDING_MODEL = 'offline-hash-ngram-v1';
export const LEXICAL_DIMENSIONS = 384;

export const STOP_WORDS = new Set(
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
export function hashEmbedding(text: string, dims: number = LEXICAL_DIMENSIONS): Float32Array {
  return hashInto(new Float32Array(dims), text, tokenize(text));
}

/** Writes the hashed features of `text` (its `words`, from `tokenize`) into `v`, L2-normalised:
 * the semantic embedder passes its surface-form channel, a view of its own vector. */
export function hashInto(v: Float32Array, text: string, words: readonly string[]): Float32Array {
  const dims = v.length;
  // A feature is hashed twice with FNV-1a: its text picks the dimension, and '~' + its text the
  // sign (a second hash, so collisions cancel out on average instead of piling up). Both hashes
  // run along the feature's pieces without building its string: `h` and `g` are the two states.
  const add = (h: number, g: number, weight: number) => {
    v[(h >>> 0) % dims]! += (g & 1 ? 1 : -1) * weight;
  };
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
