// The service's WebAssembly kernels (the memory module's memory.hamming.wat and memory.sketch.wat,
// the word vectors' models/word-dots.wat) are held as the base64 of their assembled bytes (wabt's
// `wat2wasm`; each kernel's test assembles its source and checks the bytes). This instantiates
// one, each instance with its own memory.

// The few WebAssembly types used here (the project compiles against ES2023 and Node's types,
// which do not declare the JavaScript API's classes).
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PAGE = 65_536;
/** Compiled once per kernel. */
const modules = new Map<string, object>();

/** A new instance of the kernel whose bytes are `base64`, its memory grown to at least `bytes`. */
export function instantiate(base64: string, bytes: number): Record<string, unknown> & { memory: WasmMemory } {
  let module = modules.get(base64);
  if (!module) modules.set(base64, (module = new wasm.Module(Buffer.from(base64, 'base64'))));
  const { exports } = new wasm.Instance(module, {});
  const memory = exports.memory as WasmMemory;
  const pages = Math.ceil(bytes / PAGE) - memory.buffer.byteLength / PAGE;
  if (pages > 0) memory.grow(pages);
  return { ...exports, memory };
}
