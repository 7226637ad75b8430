// A data directory's tarball as PGlite's dumpDataDir('none') writes it (POSIX ustar: 512-byte
// headers, each file's bytes padded to 512), read here so that a new cluster on disk is laid down
// by us, in a directory of its own that is renamed into place once complete (cluster-dir.ts).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface TarEntry {
  /** The path inside the data directory, without a leading slash. */
  name: string;
  type: 'file' | 'dir';
  mode: number;
  data: Buffer;
}

const BLOCK = 512;

function text(header: Buffer, start: number, length: number): string {
  const field = header.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString('utf8');
}

function octal(header: Buffer, start: number, length: number): number {
  const digits = text(header, start, length).trim();
  return digits ? parseInt(digits, 8) : 0;
}

/** The entries of a tarball (regular files and directories; links and the rest are refused). */
export function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let at = 0;
  while (at + BLOCK <= tar.length) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break; // the end-of-archive blocks
    const prefix = text(header, 345, 155);
    const name = (prefix ? `${prefix}/` : '') + text(header, 0, 100);
    const size = octal(header, 124, 12);
    const flag = String.fromCharCode(header[156]!);
    const relative = name.replace(/^\/+/, '').replace(/\/+$/, '');
    if (relative.split('/').some((part) => part === '..' || part === ''))
      throw new Error(`tarball entry outside its directory: ${name}`);
    const type = flag === '5' ? 'dir' : flag === '0' || flag === '\0' ? 'file' : undefined;
    if (!type) throw new Error(`tarball entry of an unsupported kind (${flag}): ${name}`);
    const data = tar.subarray(at + BLOCK, at + BLOCK + size);
    if (data.length < size) throw new Error(`tarball cut short in ${name}`);
    entries.push({ name: relative, type, mode: octal(header, 100, 8) & 0o777, data });
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries;
}

/** Writes the entries under `dir` (which exists), skipping those `skip` names. */
export async function extractTar(entries: TarEntry[], dir: string, skip: (name: string) => boolean) {
  const made = new Set<string>([dir]);
  for (const entry of entries) {
    if (skip(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.type === 'dir') {
      await mkdir(path, { recursive: true, mode: entry.mode || 0o700 });
      made.add(path);
      continue;
    }
    if (!made.has(dirname(path))) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      made.add(dirname(path));
    }
    await writeFile(path, entry.data, { mode: entry.mode || 0o600 });
  }
}
