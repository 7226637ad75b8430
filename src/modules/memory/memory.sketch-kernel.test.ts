// The sketch kernel (its bytes are checked in memory.wasm.test.ts): each sketch bit for bit the
// plain computation's (zero-pad to p, multiply by each rotation's signs, Walsh-Hadamard transform
// one stage at a time, one bit per sign), whatever the vector's length and values.
import { describe, expect, it } from 'vitest';
import { SKETCH_BITS, sketchBytes } from './memory.sketch.js';

/** The sketch computed the plain way, the definition the kernel must match. */
function plainSketch(v: number[]): Uint8Array {
  let p = 8;
  while (p < v.length) p *= 2;
  let seed = 0x5eed1 ^ p;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
  const out = new Uint8Array(SKETCH_BITS / 8);
  let bit = 0;
  for (let round = 0; round < Math.ceil(SKETCH_BITS / p); round++) {
    const signs = Array.from({ length: p }, () => (rnd() & 0x10000 ? 1 : -1));
    const a = Array.from({ length: p }, (_, i) => (i < v.length ? v[i]! : 0) * signs[i]!);
    for (let h = 1; h < p; h *= 2)
      for (let i = 0; i < p; i += 2 * h)
        for (let j = i; j < i + h; j++) [a[j], a[j + h]] = [a[j]! + a[j + h]!, a[j]! - a[j + h]!];
    for (let i = 0; i < p && bit < SKETCH_BITS; i++, bit++)
      if (a[i]! > 0) out[bit >> 3]! |= 0x80 >> (bit & 7);
  }
  return out;
}

describe('the sketch kernel', () => {
  it('gives the plain computation bit for bit, at every size', () => {
    let seed = 11;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
    // From one value to past the sketch's bits (one rotation, cut at SKETCH_BITS), sizes that are
    // and are not powers of two, each several times (the kernel's input is reused between calls).
    for (const n of [1, 8, 3, 9, 100, 384, 300, 1000, 2048, 1536, 3072, 384]) {
      const v = Array.from({ length: n }, rnd);
      expect(Buffer.from(sketchBytes(v))).toEqual(Buffer.from(plainSketch(v)));
    }
    // Sparse vectors (the lexical embedder's) and values that are not finite.
    const sparse = Array.from({ length: 384 }, (_, i) => (i % 37 === 0 ? rnd() : 0));
    expect(Buffer.from(sketchBytes(sparse))).toEqual(Buffer.from(plainSketch(sparse)));
    const odd = [Number.NaN, 1, Number.POSITIVE_INFINITY, -1, ...Array.from({ length: 380 }, rnd)];
    expect(Buffer.from(sketchBytes(odd))).toEqual(Buffer.from(plainSketch(odd)));
  });

  it('writes at an offset, leaving the rest of the buffer alone', () => {
    const v = Array.from({ length: 384 }, (_, i) => Math.sin(i));
    const bytes = SKETCH_BITS / 8;
    const out = new Uint8Array(3 * bytes).fill(0xaa);
    sketchBytes(v, out, bytes);
    expect(Buffer.from(out.subarray(bytes, 2 * bytes))).toEqual(Buffer.from(plainSketch(v)));
    expect(out.subarray(0, bytes).every((b) => b === 0xaa)).toBe(true);
    expect(out.subarray(2 * bytes).every((b) => b === 0xaa)).toBe(true);
  });
});
