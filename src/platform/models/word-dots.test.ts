// The word vectors' dot-product kernel: its bytes are word-dots.wat assembled, and each product
// and cosine is the plain computation's, whatever the row and however many rows are asked.
import { readFileSync } from 'node:fs';
import wabtInit from 'wabt';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORD_DOTS_WASM_BASE64, WordDots } from './word-dots.js';
import { loadWordVectors, type WordVectors } from './word-vectors.js';
import { loadWordSimilarity } from './words.js';

let words: WordVectors;
beforeAll(async () => {
  words = await loadWordVectors();
});

const plainDot = (v: Pick<WordVectors, 'dims' | 'values'>, a: number, b: number) => {
  let d = 0;
  for (let i = 0; i < v.dims; i++) d += v.values[a * v.dims + i]! * v.values[b * v.dims + i]!;
  return d;
};

describe('the word dot-product kernel', () => {
  it('is word-dots.wat assembled', async () => {
    const wabt = await wabtInit();
    const source = readFileSync(new URL('./word-dots.wat', import.meta.url), 'utf8');
    const assembled = Buffer.from(wabt.parseWat('word-dots.wat', source).toBinary({}).buffer);
    expect(assembled.toString('base64')).toBe(WORD_DOTS_WASM_BASE64);
  });

  it('gives each row the plain dot product, the last row and a missing one (0) included', () => {
    const dots = new WordDots(words);
    const last = words.values.length / words.dims - 1;
    const rows = Int32Array.from([0, 1, 17, 999, -1, last, 123_456 % (last + 1), 5]);
    const out = new Float64Array(rows.length);
    dots.dots(17, rows, out);
    expect(Array.from(out)).toEqual(Array.from(rows, (b) => (b < 0 ? 0 : plainDot(words, 17, b))));
  });

  it('works through more rows than it takes at once, at any dimension', () => {
    // 37 dimensions: rows that do not fill 16-byte chunks, read past their end into the next.
    const dims = 37;
    const values = Int8Array.from({ length: dims * 50 }, (_, i) => ((i * 7919) % 255) - 127);
    const dots = new WordDots({ dims, values });
    const rows = Int32Array.from({ length: 9_000 }, (_, i) => (i % 11 === 0 ? -1 : (i * 31) % 50));
    const out = new Float64Array(rows.length);
    dots.dots(49, rows, out);
    expect(Array.from(out)).toEqual(Array.from(rows, (b) => (b < 0 ? 0 : plainDot({ dims, values }, 49, b))));
  });

  it('makes the plain cosines, the same on the first computation and every later one', async () => {
    const similarity = await loadWordSimilarity();
    const rank = (w: string) => similarity.rank(w)!;
    const plainCosine = (a: number, b: number) =>
      plainDot(words, a, b) / (Math.sqrt(plainDot(words, a, a)) * Math.sqrt(plainDot(words, b, b)));
    const rows = Int32Array.from([rank('watercolour'), rank('horse'), -1, rank('paint')]);
    const out = new Float64Array(rows.length);
    similarity.cosines(rank('paint'), rows, out);
    const expected = [
      plainCosine(rank('paint'), rank('watercolour')),
      plainCosine(rank('paint'), rank('horse')),
      0,
      1,
    ];
    expect(Array.from(out)).toEqual(expected);
    similarity.cosines(rank('paint'), rows, out);
    expect(Array.from(out)).toEqual(expected);
    expect(out[0]).toBeGreaterThan(out[1]!);
  });
});
