// The embedded database as `npm start` runs it: PGlite on a data directory (here a temporary one,
// removed when the bench exits). Not `memory://`: its in-memory file system grows a file by
// copying it whole (every 12.5 % of growth past 1 MB), so a bench that writes for minutes stalls
// for seconds at a time (inserts of 300 KB: up to 5 s on memory://, at most 0.2 s on a directory),
// which says nothing about the service.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Config variables for PGlite on a fresh temporary data directory. */
export function embeddedDataDir(): { DATABASE_URL: undefined; DATA_DIR: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ap-bench-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return { DATABASE_URL: undefined, DATA_DIR: dir };
}
