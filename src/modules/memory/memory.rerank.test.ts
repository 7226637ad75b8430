import { beforeAll, describe, expect, it } from 'vitest';
import { loadWordSimilarity } from '../../platform/models/words.js';
import { Reranker, type RerankCandidate } from './memory.rerank.js';

let r: Reranker;
beforeAll(async () => {
  r = new Reranker(await loadWordSimilarity());
});

const candidate = (
  memoryId: number,
  content: string,
  more: Partial<RerankCandidate> = {},
): RerankCandidate => ({
  memoryId,
  content,
  cosine: undefined,
  fused: 0.5,
  ...more,
});

describe('the reranker', () => {
  it('weighs a rare word of the query above a name every memory shares', () => {
    const ranked = r.rerank(
      'Did Mel go to the pottery class?',
      [
        candidate(1, 'Mel: I went to the beach with the kids.'),
        candidate(2, 'Mel: The pottery class was on Tuesday.'),
        candidate(3, 'Mel: Mel here, hello Mel!'),
      ],
      new Map(),
    );
    expect(ranked.map((x) => x.memoryId)[0]).toBe(2);
  });

  it('matches a word by meaning when no memory has the word itself', () => {
    const ranked = r.rerank(
      'what did she paint?',
      [candidate(1, 'I finished a watercolour of the lake.'), candidate(2, 'The invoice is due on Friday.')],
      new Map(),
    );
    expect(ranked.map((x) => x.memoryId)).toEqual([1, 2]);
  });

  it('lets an answer borrow relevance from the question it answers (its neighbour)', () => {
    const question = candidate(10, 'Caroline: Have you been painting lately?', { next: 11 });
    const filler = candidate(20, 'Melanie: Yes, it was a sunny day.');
    const neighbours = new Map([
      [11, { content: 'Melanie: Yes, a lake at sunrise, last week.', previous: 10 }],
    ]);
    const ranked = r.rerank('What did Melanie paint?', [question, filler], neighbours);
    const place = (id: number) => ranked.findIndex((x) => x.memoryId === id);
    // The answer, read only as a neighbour, comes before the unrelated turn.
    expect(place(11)).toBeGreaterThanOrEqual(0);
    expect(place(11)).toBeLessThan(place(20));
  });

  it('reads a turn with the one before it: the answer to the question asked there', () => {
    // "Who performed?" is asked in one turn and answered in the next, whose own words share none
    // with the query; turns that do say "concert" or "birthday" but answer nothing come after it.
    const told = candidate(1, 'Melanie: We celebrated my daughter birthday with music!', { next: 2 });
    const asked = candidate(2, 'Caroline: Wow, who performed at the birthday concert?', {
      previous: 1,
      next: 3,
    });
    const tickets = candidate(4, 'Caroline: My brother likes concert tickets as presents.');
    const cake = candidate(5, 'Caroline: The birthday cake was huge.');
    const neighbours = new Map([
      [3, { content: 'Melanie: It was Matt Patterson, so talented.', previous: 2 }],
    ]);
    const ranked = r.rerank(
      'Who performed at the birthday concert?',
      [told, asked, tickets, cake],
      neighbours,
    );
    // The answer ranks just after the question it answers (ANSWER_SHARE), before the turn that
    // told of the birthday.
    expect(ranked.map((x) => x.memoryId)).toEqual([2, 3, 1, 4, 5]);
    // Said, not asked, the same turn lends its follower only a neighbour's share.
    const said = { ...asked, content: 'Caroline: Wow, who performed at the birthday concert.' };
    const unasked = r.rerank(
      'Who performed at the birthday concert?',
      [told, said, tickets, cake],
      neighbours,
    );
    expect(unasked.map((x) => x.memoryId)).toEqual([2, 1, 3, 4, 5]);
  });

  it('scores in [0, 1], best first; a lone exact match on full text alone scores 1', () => {
    const alone = r.rerank(
      'spare key',
      [candidate(5, 'The spare key hides under the blue flowerpot.')],
      new Map(),
    );
    expect(alone).toEqual([{ memoryId: 5, similarity: 1 }]);
    const ranked = r.rerank(
      'spare key',
      [
        candidate(5, 'The spare key hides under the blue flowerpot.', { cosine: 0.8 }),
        candidate(6, 'Keys of the piano were dusty.', { cosine: 0.3 }),
        candidate(7, 'Nothing related at all.', { cosine: -0.2 }),
      ],
      new Map(),
    );
    expect(ranked.map((x) => x.memoryId)).toEqual([5, 6, 7]);
    for (const x of ranked) {
      expect(x.similarity).toBeGreaterThanOrEqual(0);
      expect(x.similarity).toBeLessThanOrEqual(1);
    }
    // The cosine counts for half when the vector side took part: 0.8 → (1 + 0.8) / 2.
    expect(ranked[0]!.similarity).toBeCloseTo(0.9, 6);
  });
});
