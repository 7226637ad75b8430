// The memory module's WebAssembly kernels: the bytes each holds are its .wat source assembled
// (platform/wasm.ts loads them; each kernel's own test checks what it computes).
import { readFileSync } from 'node:fs';
import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import { HAMMING_WASM_BASE64 } from './memory.hamming.js';
import { SKETCH_WASM_BASE64 } from './memory.sketch-kernel.js';

describe('the WebAssembly kernels', () => {
  it.each([
    ['memory.hamming.wat', HAMMING_WASM_BASE64],
    ['memory.sketch.wat', SKETCH_WASM_BASE64],
  ])('%s is assembled as held', async (file, held) => {
    const wabt = await wabtInit();
    const source = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    const assembled = Buffer.from(wabt.parseWat(file, source).toBinary({}).buffer);
    expect(assembled.toString('base64')).toBe(held);
  });
});
