// Word vectors' dot products computed by a WebAssembly kernel (word-dots.wat, assembled below;
// word-dots.test.ts checks the bytes against the source and the products against the plain
// computation). Reranking a memory search matches each query word with every distinct word of the
// memories reranked: thousands of 100-dimension int8 dot products a search, sixteen at a time
// here against one in JavaScript.
import { instantiate } from '../wasm.js';
import type { WordVectors } from './word-vectors.js';

/** word-dots.wat, assembled by wabt (`wat2wasm`). */
export const WORD_DOTS_WASM_BASE64 =
  'AGFzbQEAAAABCgFgBn9/f39/fwADAgEABQMBAAEHEQIGbWVtb3J5AgAEZG90cwAACsMBAcABAgV/A3sgAEEEdCEKAkADQCAGIARPDQEgAyAGQQJ0aigCACEH/QwAAAAAAAAAAAAAAAAAAAAAIQ0gB0EATgRAIAEgByACbGohCEEAIQkDQCAJ/QAEACELIAj9AAQAIQwgDSALIAz9nAH9fiALIAz9nQH9fv2uAf2uASENIAhBEGohCCAJQRBqIQkgCSAKSQ0ACwsgBSAGQQJ0aiAN/RsAIA39GwFqIA39GwIgDf0bA2pqNgIAIAZBAWohBgwACwsL';

/** Rows handed to the kernel at a time: bounds the memory of its lists. */
const WINDOW = 4_096;

/** One kernel instance holding a copy of the vectors' int8 values: [query, zero-padded to 16-byte
 * chunks][every row, one after another, then a chunk of slack][row list][products]. Synchronous
 * and single-threaded like the rest of the process, so one instance serves every search. */
export class WordDots {
  private readonly query: Int8Array;
  private readonly list: Int32Array;
  private readonly products: Int32Array;
  private readonly run: (count: number) => void;

  constructor(private readonly words: Pick<WordVectors, 'dims' | 'values'>) {
    const chunks = Math.ceil(words.dims / 16);
    const tableAt = chunks * 16;
    const listAt = Math.ceil((tableAt + words.values.length + 16) / 4) * 4;
    const productsAt = listAt + WINDOW * 4;
    const exports = instantiate(WORD_DOTS_WASM_BASE64, productsAt + WINDOW * 4);
    const buffer = exports.memory.buffer;
    new Int8Array(buffer, tableAt, words.values.length).set(words.values);
    this.query = new Int8Array(buffer, 0, tableAt);
    this.list = new Int32Array(buffer, listAt, WINDOW);
    this.products = new Int32Array(buffer, productsAt, WINDOW);
    const dots = exports.dots as (...args: number[]) => void;
    this.run = (count) => dots(chunks, tableAt, words.dims, listAt, count, productsAt);
  }

  /** The dot product of row `a` with each row of `rows` (a negative row: 0), into `out`. */
  dots(a: number, rows: Int32Array, out: Float64Array): void {
    const { dims, values } = this.words;
    this.query.set(values.subarray(a * dims, (a + 1) * dims));
    for (let start = 0; start < rows.length; start += WINDOW) {
      const count = Math.min(WINDOW, rows.length - start);
      this.list.set(rows.subarray(start, start + count));
      this.run(count);
      for (let i = 0; i < count; i++) out[start + i] = this.products[i]!;
    }
  }
}
