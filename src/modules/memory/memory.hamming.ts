// Hamming distances between binary sketches, computed by a small WebAssembly kernel
// (memory.hamming.wat, assembled below; memory.wasm.test.ts checks the bytes against the source).
import { SKETCH_BITS } from './memory.sketch.js';
import { instantiate, type WasmMemory } from '../../platform/wasm.js';

/** memory.hamming.wat, assembled by wabt (`wat2wasm`). */
export const HAMMING_WASM_BASE64 =
  'AGFzbQEAAAABCAFgBH9/f38AAwIBAAUDAQABBxQCBm1lbW9yeQIAB2hhbW1pbmcAAApsAWoCBH8BfiAAIQYCQANAIAQgAU8NAUIAIQhBACEFQQAhBwNAIAggBikDACAHKQMAhXt8IQggBkEIaiEGIAdBCGohByAFQQFqIQUgBSACSQ0ACyADIARBAXRqIAinOwEAIARBAWohBAwACwsL';

const SKETCH_BYTES = SKETCH_BITS / 8;
/** Sketches copied into the kernel's memory at a time: bounds that memory (~4 MB) whatever the
 * size of a scope. */
const WINDOW = 16_384;

/** One kernel instance with its own memory: [query][window of sketches][distances]. Synchronous
 * and single-threaded like the rest of the process, so one instance serves every search. */
export class HammingKernel {
  private readonly memory: WasmMemory;
  private readonly run: (base: number, count: number, words: number, out: number) => void;

  constructor() {
    const exports = instantiate(HAMMING_WASM_BASE64, SKETCH_BYTES + WINDOW * (SKETCH_BYTES + 2));
    this.memory = exports.memory;
    this.run = exports.hamming as HammingKernel['run'];
  }

  /** The distance of each of the first `count` sketches in `sketches` (SKETCH_BYTES each) to
   * `query`, written to `out` from index 0. */
  distances(query: Uint8Array, sketches: Uint8Array, count: number, out: Uint16Array): void {
    const heap = new Uint8Array(this.memory.buffer);
    heap.set(query.subarray(0, SKETCH_BYTES), 0);
    const outAt = SKETCH_BYTES + WINDOW * SKETCH_BYTES;
    const results = new Uint16Array(this.memory.buffer, outAt, WINDOW);
    for (let start = 0; start < count; start += WINDOW) {
      const n = Math.min(WINDOW, count - start);
      heap.set(sketches.subarray(start * SKETCH_BYTES, (start + n) * SKETCH_BYTES), SKETCH_BYTES);
      this.run(SKETCH_BYTES, n, SKETCH_BYTES / 8, outAt);
      out.set(results.subarray(0, n), start);
    }
  }
}
