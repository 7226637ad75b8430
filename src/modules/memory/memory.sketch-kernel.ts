// The sketch of memory.sketch.ts computed by a WebAssembly kernel (memory.sketch.wat, assembled
// below; memory.wasm.test.ts checks the bytes against the source, memory.sketch-kernel.test.ts the
// sketches against the plain computation). Without pgvector every embedding stored and every
// query is sketched.
import { instantiate } from '../../platform/wasm.js';

/** memory.sketch.wat, assembled by wabt (`wat2wasm`). */
export const SKETCH_WASM_BASE64 =
  'AGFzbQEAAAABEAJgAn9/AGAHf39/f39/fwADAwIAAQUDAQABBxMCBm1lbW9yeQIABnNrZXRjaAABCuwFAvMCAgZ/CHsgACABQQN0aiEEQQIhAgJAA0AgAkECdCABSw0BIAJBA3QhAyAAIQUDQCAFIQYgBSADaiEHA0AgBv0ABAAhCCAGIANq/QAEACEJIAYgA0EBdGr9AAQAIQogBiADQQNsav0ABAAhCyAIIAn98AEhDCAIIAn98QEhDSAKIAv98AEhDiAKIAv98QEhDyAGIAwgDv3wAf0LBAAgBiADaiANIA/98AH9CwQAIAYgA0EBdGogDCAO/fEB/QsEACAGIANBA2xqIA0gD/3xAf0LBAAgBkEQaiEGIAYgB0kNAAsgBSADQQJ0aiEFIAUgBEkNAAsgAkECdCECDAALCwJAIAIgAU8NACACQQN0IQMgACEFA0AgBSEGIAUgA2ohBwNAIAb9AAQAIQggBiADav0ABAAhCSAGIAggCf3wAf0LBAAgBiADaiAIIAn98QH9CwQAIAZBEGohBiAGIAdJDQALIAUgA0EBdGohBSAFIARJDQALCwv0AgIEfwF7IAFBA3QhBwJAA0AgCCACTw0BQQAhCQNAIAAgCWr9AAQAIAMgCWr9AAQA/fIBIQsgBCAJaiALIAv9DQABAgMEBQYHAAECAwQFBgcgCyAL/Q0ICQoLDA0ODwgJCgsMDQ4P/QwAAAAAAADwPwAAAAAAAPC//fIB/fAB/QsEACAJQRBqIQkgCSAHSQ0ACyAEIAEQACAEIQkCQANAIAkgBCAHak8NASAKIAZPDQEgBSAKQQN2aiAJKwMARAAAAAAAAAAAZEEHdCAJKwMIRAAAAAAAAAAAZEEGdHIgCSsDEEQAAAAAAAAAAGRBBXQgCSsDGEQAAAAAAAAAAGRBBHRyciAJKwMgRAAAAAAAAAAAZEEDdCAJKwMoRAAAAAAAAAAAZEECdHIgCSsDMEQAAAAAAAAAAGRBAXQgCSsDOEQAAAAAAAAAAGRycnI6AAAgCUHAAGohCSAKQQhqIQoMAAsLIAMgB2ohAyAIQQFqIQgMAAsLCw==';

/** One kernel per padded size p (a power of two, at least 8), with its rotations' signs in its own
 * memory: [signs: rounds × p f64][input: p f64][scratch: p f64][sketch bytes]. Synchronous and
 * single-threaded like the rest of the process, so one instance serves every sketch of its size. */
export class SketchKernel {
  private readonly input: Float64Array;
  private readonly output: Uint8Array;
  private readonly run: () => void;

  constructor(p: number, signs: Float64Array[], bits: number) {
    if (p < 8 || (p & (p - 1)) !== 0) throw new Error(`sketch size ${p}: not a power of two of at least 8`);
    const rounds = signs.length;
    const inputAt = rounds * p * 8;
    const scratchAt = inputAt + p * 8;
    const outputAt = scratchAt + p * 8;
    const exports = instantiate(SKETCH_WASM_BASE64, outputAt + bits / 8);
    const memory = exports.memory;
    signs.forEach((s, r) => new Float64Array(memory.buffer, r * p * 8, p).set(s));
    this.input = new Float64Array(memory.buffer, inputAt, p);
    this.output = new Uint8Array(memory.buffer, outputAt, bits / 8);
    const sketch = exports.sketch as (...args: number[]) => void;
    this.run = () => sketch(inputAt, p, rounds, 0, scratchAt, outputAt, bits);
  }

  /** The sketch of `v` (at most p values), written to `out` at `offset`. */
  sketch(v: ArrayLike<number>, out: Uint8Array, offset: number): void {
    const n = v.length;
    for (let i = 0; i < n; i++) this.input[i] = v[i]!;
    this.input.fill(0, n);
    this.run();
    out.set(this.output, offset);
  }
}
