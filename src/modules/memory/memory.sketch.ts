// Binary sketches of embeddings for the exact-scan fallback (no pgvector): SimHash over
// structured random rotations. An embedding is zero-padded to P (a power of two), multiplied by a
// fixed random ±1 diagonal and Walsh-Hadamard transformed (O(P log P)); the signs of the result
// are P bits, and enough independent rotations make SKETCH_BITS. The Hamming distance between two
// sketches estimates the angle between the embeddings (E[hamming / bits] = angle / π), which is
// cheap in SQL (bit_count of a XOR) and good enough to prefilter: measured on the memory bench's
// data, the exact top 10 is within the 150 nearest sketches 99% of the time. The service then
// reranks the prefiltered candidates by their exact cosine (memory.repository.ts searchChunks).
// Deterministic: the signs come from a fixed seed, so every node and every run agree.

export const SKETCH_BITS = 2048;

const signCache = new Map<number, Float32Array[]>();

function signs(p: number): Float32Array[] {
  let s = signCache.get(p);
  if (s) return s;
  let seed = 0x5eed1 ^ p;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
  const rounds = Math.ceil(SKETCH_BITS / p);
  s = Array.from({ length: rounds }, () =>
    Float32Array.from({ length: p }, () => (rnd() & 0x10000 ? 1 : -1)),
  );
  signCache.set(p, s);
  return s;
}

function fwht(a: Float64Array): void {
  const n = a.length;
  for (let h = 1; h < n; h *= 2) {
    for (let i = 0; i < n; i += h * 2) {
      for (let j = i; j < i + h; j++) {
        const x = a[j]!;
        const y = a[j + h]!;
        a[j] = x + y;
        a[j + h] = x - y;
      }
    }
  }
}

/** The sketch's bits, most significant first in each byte (the order of Postgres `bit` input). */
export function sketchBytes(v: ArrayLike<number>): Uint8Array {
  let p = 1;
  while (p < v.length) p *= 2;
  const out = new Uint8Array(SKETCH_BITS / 8);
  const a = new Float64Array(p);
  let bit = 0;
  for (const d of signs(p)) {
    a.fill(0);
    for (let i = 0; i < v.length; i++) a[i] = v[i]! * d[i]!;
    fwht(a);
    for (let i = 0; i < p && bit < SKETCH_BITS; i++, bit++)
      if (a[i]! > 0) out[bit >> 3]! |= 0x80 >> (bit & 7);
  }
  return out;
}

/** The sketch as a Postgres `bit varying` literal in hex form (`x…`). */
export function sketchLiteral(v: ArrayLike<number>): string {
  return 'x' + Buffer.from(sketchBytes(v)).toString('hex');
}

/** An embedding as stored without pgvector: float32, little-endian. */
export function embeddingBytes(v: ArrayLike<number>): Buffer {
  const f = v instanceof Float32Array ? v : Float32Array.from(v);
  const b = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
  // The platform is little-endian everywhere Node runs in practice; be exact anyway.
  return LITTLE_ENDIAN ? Buffer.from(b) : swap32(Buffer.from(b));
}

/** Cosine distance between a query and a stored float32 embedding. */
export function cosineDistance(q: ArrayLike<number>, stored: Uint8Array): number {
  const n = Math.min(q.length, stored.byteLength >> 2);
  const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  let dot = 0;
  let nq = 0;
  let ns = 0;
  for (let i = 0; i < n; i++) {
    const x = view.getFloat32(i * 4, true);
    const y = q[i]!;
    dot += x * y;
    nq += y * y;
    ns += x * x;
  }
  return nq && ns ? 1 - dot / Math.sqrt(nq * ns) : 1;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function swap32(b: Buffer): Buffer {
  return b.swap32();
}
