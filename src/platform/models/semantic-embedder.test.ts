import { beforeAll, describe, expect, it } from 'vitest';
import { cosine } from './lexical-embedder.js';
import { OfflineProvider } from './offline.js';
import { SEMANTIC_DIMENSIONS, SEMANTIC_EMBEDDING_MODEL, SemanticEmbedder } from './semantic-embedder.js';
import { loadWordVectors, VOCABULARY } from './word-vectors.js';

describe('the offline semantic embedder', () => {
  let e: SemanticEmbedder;
  beforeAll(async () => {
    e = new SemanticEmbedder(await loadWordVectors());
  });

  it('reads the packaged word vectors: the most frequent words, 100 dimensions', async () => {
    const words = await loadWordVectors();
    expect(words.dims).toBe(100);
    expect(words.index.size).toBeGreaterThan(VOCABULARY * 0.9);
    expect(words.index.get('the')).toBe(0);
    expect(words.index.has('watercolour')).toBe(true);
  });

  it('is deterministic, L2-normalised and of the recorded dimension', async () => {
    const a = e.embed('I finished a watercolour of the lake');
    expect(a).toHaveLength(SEMANTIC_DIMENSIONS);
    expect(Array.from(a)).toEqual(Array.from(e.embed('I finished a watercolour of the lake')));
    expect(Math.sqrt(a.reduce((n, x) => n + x * x, 0))).toBeCloseTo(1, 5);
    const p = new OfflineProvider();
    const r = await p.embed(['I finished a watercolour of the lake']);
    expect(r).toMatchObject({
      model: SEMANTIC_EMBEDDING_MODEL,
      dimensions: SEMANTIC_DIMENSIONS,
      offline: true,
    });
    expect(Array.from(r.embeddings[0]!)).toEqual(Array.from(a));
  });

  // Pairs that mean something alike, each beside a text about something else.
  const pairs: [string, string, string][] = [
    ['what did she paint?', 'I finished a watercolour of the lake', 'The invoice is due on Friday'],
    ['my car broke down', 'the automobile needs a mechanic', 'we baked bread with rye flour'],
    ['I adopted a puppy', 'our new dog sleeps on the sofa', 'the printer is out of toner'],
    ['she plays the violin', 'her cello concert was lovely', 'the train to Leeds was late'],
    ['he is a nurse', 'he works at the hospital', 'the garden needs more tulips'],
    ['I love hiking in the mountains', 'we climbed a trail to the summit', 'the printer is out of toner'],
  ];

  it('scores related texts above unrelated ones, without a word in common', () => {
    for (const [q, related, unrelated] of pairs) {
      const v = e.embed(q);
      expect(cosine(v, e.embed(related)), `${q} / ${related}`).toBeGreaterThan(cosine(v, e.embed(unrelated)));
    }
  });

  it('still matches words outside its vocabulary by their form', () => {
    const a = e.embed('Zyrqualix flew the glimmerkite');
    expect(cosine(a, e.embed('the glimmerkite of Zyrqualix'))).toBeGreaterThan(0.6);
    expect(cosine(a, e.embed('a picnic by the river'))).toBeLessThan(0.3);
    // A text of unknown words alone is its surface form, still normalised.
    const unknown = e.embed('qxv zzkt');
    expect(Math.sqrt(unknown.reduce((n, x) => n + x * x, 0))).toBeCloseTo(1, 5);
  });

  it('refuses a size that leaves no room for the surface form', async () => {
    const words = await loadWordVectors();
    expect(() => new SemanticEmbedder(words, 64)).toThrow(/more than 100 dimensions/);
    expect(() => new OfflineProvider(64)).toThrow(/EMBEDDING_DIMENSIONS must be more than 100/);
    expect(new OfflineProvider(64, 'offline-hash-ngram-v1').embeddingDimensions).toBe(64);
  });
});
