// Binary sketches of embeddings for the exact-scan fallback (no pgvector): SimHash over
// structured random rotations. An embedding is zero-padded to P (a power of two, at least 8),
// multiplied by a fixed random ±1 diagonal and Walsh-Hadamard transformed (O(P log P), by a
// WebAssembly kernel: memory.sketch-kernel.ts); the signs of the result are P bits, and enough
// independent rotations make SKETCH_BITS. The Hamming distance between two sketches estimates
// the angle between the embeddings (E[hamming / bits] = angle / π), which is cheap in SQL
// (bit_count of a XOR) and good enough to prefilter: measured on the memory bench's
// data, the exact top 10 is within the 150 nearest sketches 99% of the time. The service then
// reranks the prefiltered candidates by the cosine of their int8 embeddings (`quantize`), which it
// keeps beside the sketches (memory.sketch-index.ts).
// Deterministic: the signs come from a fixed seed, so every node and every run agree.
import { SketchKernel } from './memory.sketch-kernel.js';

export const SKETCH_BITS = 2048;

/** Each rotation's ±1 signs for the padded size p (made once per size, by its kernel). */
function signs(p: number): Float64Array[] {
  let seed = 0x5eed1 ^ p;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
  const rounds = Math.ceil(SKETCH_BITS / p);
  return Array.from({ length: rounds }, () =>
    Float64Array.from({ length: p }, () => (rnd() & 0x10000 ? 1 : -1)),
  );
}

const kernels = new Map<number, SketchKernel>();

/** The sketch's bits, most significant first in each byte (the order of Postgres `bit` input),
 * written to `out` at `offset` (SKETCH_BITS / 8 bytes). */
export function sketchBytes(
  v: ArrayLike<number>,
  out: Uint8Array = new Uint8Array(SKETCH_BITS / 8),
  offset = 0,
): Uint8Array {
  let p = 8;
  while (p < v.length) p *= 2;
  let kernel = kernels.get(p);
  if (!kernel) kernels.set(p, (kernel = new SketchKernel(p, signs(p), SKETCH_BITS)));
  kernel.sketch(v, out, offset);
  return out;
}

/** The sketch as a Postgres `bit varying` literal in hex form (`x…`). */
export function sketchLiteral(v: ArrayLike<number>): string {
  return 'x' + Buffer.from(sketchBytes(v)).toString('hex');
}

/** An embedding as stored without pgvector: int8 values, scaled so the largest magnitude is 127
 * (rounded half away from zero, as migration 0017 converts the float32 bytes stored before).
 * Cosine needs no scale: it is the same for any multiple of a vector. At 384 dimensions the
 * quantisation moves a cosine by about 0.001, below the gap between most neighbours' similarities;
 * the memory bench measures recall@10 against float cosine. */
export function quantize(v: ArrayLike<number>, out: Int8Array = new Int8Array(v.length)): Int8Array {
  let max = 0;
  for (let i = 0; i < v.length; i++) {
    const a = Math.abs(finite(v[i]!));
    if (a > max) max = a;
  }
  if (max === 0) return out.fill(0);
  for (let i = 0; i < v.length; i++) {
    const y = (finite(v[i]!) * 127) / max;
    // Half away from zero on each side (Math.sign × Math.floor, without the calls).
    out[i] = y >= 0 ? Math.floor(y + 0.5) : -Math.floor(0.5 - y);
  }
  return out;
}

function finite(x: number): number {
  return Number.isFinite(x) ? x : 0;
}

/** Cosine distance between a query (and its norm) and a stored int8 embedding. */
export function cosineDistanceInt8(q: ArrayLike<number>, qNorm: number, stored: Int8Array): number {
  const n = Math.min(q.length, stored.length);
  let dot = 0;
  let ns = 0;
  for (let i = 0; i < n; i++) {
    const x = stored[i]!;
    dot += x * q[i]!;
    ns += x * x;
  }
  return qNorm && ns ? 1 - dot / (qNorm * Math.sqrt(ns)) : 1;
}

/** Stored int8 bytes (a `bytea` as read) as the values they are, without a copy. */
export function int8View(bytes: Uint8Array): Int8Array {
  return new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return Math.sqrt(s);
}

// ---------------------------------------------------------------------------------------------
// Embeddings as binary array parameters. node-postgres sends a Buffer parameter in binary format,
// so the server takes floats and bytes as they are instead of parsing text: a pgvector text literal
// (some 3.5 KB at 384 dimensions) cost more to format here and to parse there than the row costs
// to insert. Each buffer is one array in Postgres' binary array format (one dimension, no nulls).

/** The OIDs of pgvector's types in this database (an extension's types have no fixed OID). */
export interface VectorTypes {
  vector: number;
  /** pgvector 0.7 and later. */
  sparsevec: number | null;
}

const OID_BYTEA = 17;
const OID_VARBIT = 1562;

function arrayBuffer(elementOid: number, count: number, bodyBytes: number): { buf: Buffer; dv: DataView } {
  const buf = Buffer.alloc(20 + 4 * count + bodyBytes);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  dv.setInt32(0, 1); // dimensions
  dv.setInt32(4, 0); // no nulls
  dv.setUint32(8, elementOid);
  dv.setInt32(12, count);
  dv.setInt32(16, 1); // lower bound
  return { buf, dv };
}

/** A value as float4 stores it; what cannot be stored (NaN, ±∞) becomes 0, as in the text form. */
function float4(x: number): number {
  const y = Math.fround(x);
  return Number.isFinite(y) ? y : 0;
}

function nonZero(v: ArrayLike<number>): number {
  let nnz = 0;
  for (let i = 0; i < v.length; i++) if (float4(v[i]!) !== 0) nnz++;
  return nnz;
}

/** Embeddings as a binary pgvector array: `sparsevec[]` when that is the smaller (the offline
 * embedder's vectors are mostly zeros; the statement casts each to `vector`), else `vector[]`. */
export function vectorArray(types: VectorTypes, vs: ArrayLike<number>[]): { data: Buffer; sparse: boolean } {
  const nnz = vs.map(nonZero);
  // vector: int16 dim, int16 unused, float4 × dim; sparsevec: int32 dim, nnz, unused, then int32
  // indices (0-based, ascending) and float4 values (non-zero), nnz of each.
  const denseBytes = vs.reduce((n, v) => n + 4 + 4 * v.length, 0);
  const sparseBytes = nnz.reduce((n, k) => n + 12 + 8 * k, 0);
  if (types.sparsevec !== null && sparseBytes < denseBytes) {
    const { buf, dv } = arrayBuffer(types.sparsevec, vs.length, sparseBytes);
    let o = 20;
    vs.forEach((v, n) => {
      const k = nnz[n]!;
      dv.setInt32(o, 12 + 8 * k);
      dv.setInt32(o + 4, v.length);
      dv.setInt32(o + 8, k);
      dv.setInt32(o + 12, 0);
      let io = o + 16;
      let vo = io + 4 * k;
      for (let i = 0; i < v.length; i++) {
        const x = float4(v[i]!);
        if (x === 0) continue;
        dv.setInt32(io, i);
        dv.setFloat32(vo, x);
        io += 4;
        vo += 4;
      }
      o = vo;
    });
    return { data: buf, sparse: true };
  }
  const { buf, dv } = arrayBuffer(types.vector, vs.length, denseBytes);
  let o = 20;
  for (const v of vs) {
    dv.setInt32(o, 4 + 4 * v.length);
    dv.setInt16(o + 4, v.length);
    dv.setInt16(o + 6, 0);
    o += 8;
    for (let i = 0; i < v.length; i++, o += 4) dv.setFloat32(o, float4(v[i]!));
  }
  return { data: buf, sparse: false };
}

/** The embeddings' sketches as a binary `varbit[]`. */
export function sketchArray(vs: ArrayLike<number>[]): Buffer {
  const bytes = SKETCH_BITS / 8;
  const { buf, dv } = arrayBuffer(OID_VARBIT, vs.length, vs.length * (4 + bytes));
  let o = 20;
  for (const v of vs) {
    dv.setInt32(o, 4 + bytes);
    dv.setInt32(o + 4, SKETCH_BITS);
    sketchBytes(v, buf, o + 8);
    o += 8 + bytes;
  }
  return buf;
}

/** The embeddings as stored without pgvector (`quantize`), as a binary `bytea[]`. */
export function int8Array(vs: ArrayLike<number>[]): Buffer {
  const { buf, dv } = arrayBuffer(
    OID_BYTEA,
    vs.length,
    vs.reduce((n, v) => n + v.length, 0),
  );
  let o = 20;
  for (const v of vs) {
    dv.setInt32(o, v.length);
    quantize(v, new Int8Array(buf.buffer, buf.byteOffset + o + 4, v.length));
    o += 4 + v.length;
  }
  return buf;
}
