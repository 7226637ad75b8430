// Hamming distances between binary sketches, computed by a small WebAssembly kernel
// (memory.hamming.wat, assembled below; its test checks the bytes against the source).
import { SKETCH_BITS } from './memory.sketch.js';

/** memory.hamming.wat, assembled by wabt (`wat2wasm`). */
export const HAMMING_WASM_BASE64 =
  'AGFzbQEAAAABCAFgBH9/f38AAwIBAAUDAQABBxQCBm1lbW9yeQIAB2hhbW1pbmcAAApsAWoCBH8BfiAAIQYCQANAIAQgAU8NAUIAIQhBACEFQQAhBwNAIAggBikDACAHKQMAhXt8IQggBkEIaiEGIAdBCGohByAFQQFqIQUgBSACSQ0ACyADIARBAXRqIAinOwEAIARBAWohBAwACwsL';

const SKETCH_BYTES = SKETCH_BITS / 8;
/** Sketches copied into the kernel's memory at a time: bounds that memory (~4 MB) whatever the
 * size of a scope. */
const WINDOW = 16_384;
const PAGE = 65_536;

// The few WebAssembly types used here (the project compiles against ES2023 and Node's types,
// which do not declare the JavaScript API's classes).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let module: object | undefined;

/** One kernel instance with its own memory: [query][window of sketches][distances]. Synchronous
 * and single-threaded like the rest of the process, so one instance serves every search. */
export class HammingKernel {
  private readonly memory: WasmMemory;
  private readonly run: (base: number, count: number, words: number, out: number) => void;

  constructor() {
    module ??= new wasm.Module(Buffer.from(HAMMING_WASM_BASE64, 'base64'));
    const instance = new wasm.Instance(module, {});
    this.memory = instance.exports.memory as WasmMemory;
    this.run = instance.exports.hamming as HammingKernel['run'];
    const needed = SKETCH_BYTES + WINDOW * (SKETCH_BYTES + 2);
    const pages = Math.ceil(needed / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.memory.grow(pages);
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
