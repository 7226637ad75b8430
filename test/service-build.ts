// The service built as `npm run build` builds it (scripts/build.mjs), for the tests' child
// processes: `node <build>/dist/main.js` is what an operator runs after `npm start`'s build, and
// a process spends no time compiling TypeScript through a loader (the suite starts dozens). Built
// from the current sources at every run (global-setup.ts), into a directory of its own under the
// system's temporary one, never the repository's dist/ (which may be stale, or an operator's).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..');

/** Builds the service into a new temporary directory; resolves with its dist/ directory. */
export async function buildService(): Promise<{ dist: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'ap-build-'));
  // What the built modules reach from their place, as they do from the repository's dist/: the
  // packages, ../package.json (the version) and ../web/dist (the console).
  for (const name of ['node_modules', 'package.json', 'web']) symlinkSync(join(root, name), join(dir, name));
  const dist = join(dir, 'dist');
  await build(dist);
  return { dist, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Builds the current sources into `dist` (again: a rerun in watch mode). */
export async function build(dist: string): Promise<void> {
  await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build.mjs'), '--out', dist], {
    cwd: root,
  });
}
