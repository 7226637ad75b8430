// The embedded database's empty cluster, kept once per machine. PGlite makes a new cluster by
// running initdb compiled to WebAssembly: 2.7 s on this service's machine, most of a first start.
// Loading the same cluster from a tarball takes 0.5 s (1.1 s onto disk). So the first new
// embedded database a machine starts keeps a tarball of its cluster as initdb left it, and every
// later new one (a fresh DATA_DIR, memory://) starts from it. The tarball is named by PGlite's
// version (a cluster is good only for the PGlite that made it) and kept where the machine's other
// derived files are (machine-cache.ts). The tarball is always made from a cluster in memory, so
// it holds nothing of any data directory's (the `-v2` of its name: the tarballs of older versions
// could carry a server's lock, and are not used).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cachePlaces, findCached } from '../machine-cache.js';

/** Where the tarball may be, in order of preference. */
export function emptyClusterPlaces(): string[] {
  // …/node_modules/@electric-sql/pglite/dist/index.cjs
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const packageDir = dirname(dirname(entry));
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  return cachePlaces(dirname(dirname(packageDir)), `pglite-${version}-empty-cluster-v2.tar`);
}

/** How a new cluster starts: from the kept tarball (`load`), or by initdb with its tarball then
 * kept at `keepAt` (the first place whose folder can be made). */
export function emptyCluster(places = emptyClusterPlaces()): { load?: string; keepAt?: string } {
  const load = findCached(places);
  if (load) return { load };
  for (const place of places) {
    try {
      mkdirSync(dirname(place), { recursive: true });
      return { keepAt: place };
    } catch {
      // Not writable: try the next place.
    }
  }
  return {};
}
