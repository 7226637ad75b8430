// Files the service derives once per machine from what its packages ship (the offline embedder's
// compact word vectors, the embedded database's empty cluster). Each is named by the versions it
// came from and kept beside the packages, in `node_modules/.cache/assistant-platform`, so that a
// fresh install makes it afresh; in the temporary folder when that cannot be written.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the file `name` may be, in order of preference; `modules` is the node_modules folder of
 * the package it is made from. */
export function cachePlaces(modules: string, name: string): string[] {
  return [join(modules, '.cache', 'assistant-platform', name), join(tmpdir(), 'assistant-platform', name)];
}

/** The first of `places` that holds the file, if any does. */
export function findCached(places: string[]): string | undefined {
  return places.find((p) => existsSync(p));
}
