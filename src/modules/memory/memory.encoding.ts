// Embeddings as the values their columns take (no SQL here): pgvector's text literal and binary
// `vector`/`sparsevec` arrays, or without pgvector the binary sketches and int8 values
// (memory.sketch.ts).
import { int8Array, sketchArray, vectorArray, type VectorTypes } from './memory.sketch.js';

/** A vector as the literal its column type parses: `[…]` for pgvector, `{…}` for real[]. */
export function vectorLiteral(v: ArrayLike<number>, vector: boolean): string {
  // Seven significant digits: what a float4 holds, and half the text of a double's digits.
  const body = Array.from(v, (x) => (Number.isFinite(x) && x !== 0 ? Number(x.toPrecision(7)) : 0)).join(',');
  return vector ? `[${body}]` : `{${body}}`;
}

/** Embeddings in the form their columns take, as binary array parameters (memory.sketch.ts):
 * pgvector's `vector` (sent sparse when that is smaller); without pgvector the sketch and the
 * int8 values. Made apart from the statement, so the service can encode while the database
 * writes the chunks. */
export interface EncodedEmbeddings {
  count: number;
  dims: number[];
  vectors?: { data: Buffer; sparse: boolean };
  sketches?: Buffer;
  int8?: Buffer;
}

export function encodeEmbeddings(
  vector: boolean,
  types: VectorTypes | undefined,
  embeddings: ArrayLike<number>[],
): EncodedEmbeddings {
  const dims = embeddings.map((e) => e.length);
  if (vector) {
    if (!types) throw new Error('pgvector types unknown');
    return { count: embeddings.length, dims, vectors: vectorArray(types, embeddings) };
  }
  return {
    count: embeddings.length,
    dims,
    sketches: sketchArray(embeddings),
    int8: int8Array(embeddings),
  };
}
