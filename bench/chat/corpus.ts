// The chat bench's corpora: the text of each memory and the question of each turn, the same on
// every run and database. `varied`: sentences drawn from 5,000 made-up words by a
// Zipf-Mandelbrot law; `narrow`: 20 words each in most memories (see bench/chat.ts).

import { prng } from '../prng.js';

export type CorpusName = 'varied' | 'narrow';

const NARROW =
  'dragon sword castle river forest potion merchant quest gold silver ember winter harbor lantern map tower bridge wolf raven crown'.split(
    ' ',
  );

/** 5,000 distinct made-up words of two to four syllables, and a sampler following the
 * Zipf-Mandelbrot law p(rank) ∝ 1 / (rank + 50). */
function variedVocabulary() {
  const rnd = prng(7);
  const onsets = 'b c d f g h j k l m n p r s t v w z br dr gr kl pl st tr'.split(' ');
  const vowels = 'a e i o u ai ea ou'.split(' ');
  const words = new Set<string>();
  while (words.size < 5000) {
    const syllables = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let k = 0; k < syllables; k++)
      w += onsets[Math.floor(rnd() * onsets.length)]! + vowels[Math.floor(rnd() * vowels.length)]!;
    words.add(w + 'n');
  }
  const list = [...words];
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= list.length; r++) cumulative.push((sum += 1 / (r + 50)));
  return (u: number) => {
    const target = u * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return list[lo]!;
  };
}

/** The text of memory i, and the question of turn n, in `corpus`. */
export function corpusOf(corpus: CorpusName) {
  if (corpus === 'narrow')
    return {
      sentence: (i: number) =>
        Array.from({ length: 12 }, (_, k) => NARROW[(i * 7 + k * 13) % NARROW.length]).join(' ') +
        ` note ${i}.`,
      question: (n: number) => `${NARROW[n % NARROW.length]} and the ${NARROW[(n * 3) % NARROW.length]}?`,
    };
  const pick = variedVocabulary();
  return {
    sentence: (i: number) => {
      const rnd = prng(i + 1);
      return Array.from({ length: 12 }, () => pick(rnd())).join(' ') + ` note ${i}.`;
    },
    question: (n: number) => {
      const rnd = prng(1_000_003 + n);
      return `what about the ${pick(rnd())} and the ${pick(rnd())}?`;
    },
  };
}
