// A data directory's cluster is laid down so that a kill at any moment leaves either none or a
// whole one: the empty cluster's tarball is written into a directory of its own beside the data
// directory and renamed into place once complete. A directory an older version left unfinished
// (killed while PGlite loaded the tarball straight into it), or one PGlite cannot open, is made
// again when it holds no data, that is, when every file in it is one of the empty cluster's.
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { clusterOnDisk, dataFiles, NOT_CLUSTER } from './cluster-dir.rules.js';
import { extractTar, readTar, type TarEntry } from './cluster-tar.js';

/** A data directory PGlite cannot open that holds data: left as it is, for the operator. */
export class ClusterUnusableError extends Error {
  constructor(
    public readonly dir: string,
    public readonly reason: string,
  ) {
    super(
      `the embedded database in ${dir} cannot be opened (${reason}) and holds data, so it is left ` +
        `as it is: restore DATA_DIR from a backup, or move it aside to start with an empty database`,
    );
    this.name = 'ClusterUnusableError';
  }
}

export interface ClusterSource {
  /** The tarball a new cluster is made from (read once, when first needed). */
  tarball(): Promise<Buffer>;
  /** Where a directory made again is said (the process's log). */
  log(line: string): void;
}

/** The regular files under `dir`, relative to it; undefined when there is no such directory. */
export async function filesUnder(dir: string): Promise<string[] | undefined> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Whether `dataDir` holds its cluster with nothing a killed process left beside it (every start
 * but the first): nothing to prepare. Synchronous, so that main.ts's early start of the embedded
 * server reaches its worker's spawn before the module loading that follows takes the thread. */
export function clusterReady(dataDir: string): boolean {
  const name = basename(dataDir);
  const left = readdirSync(dirname(dataDir)).some(
    (e) => e.startsWith(`${name}.new-`) || e.startsWith(`${name}.old-`),
  );
  return (
    !left && existsSync(join(dataDir, 'PG_VERSION')) && existsSync(join(dataDir, 'global', 'pg_control'))
  );
}

/** Makes the cluster of `dataDir` when it has none (or an unfinished one without data). Says
 * whether the cluster is new. The caller holds the data directory's lock. */
export async function prepareCluster(dataDir: string, source: ClusterSource): Promise<boolean> {
  // What killed processes left beside it (nothing of any data: see makeCluster).
  const name = basename(dataDir);
  for (const entry of await readdir(dirname(dataDir))) {
    if (entry.startsWith(`${name}.new-`) || entry.startsWith(`${name}.old-`))
      await rm(join(dirname(dataDir), entry), { recursive: true, force: true });
  }
  if (existsSync(join(dataDir, 'PG_VERSION')) && existsSync(join(dataDir, 'global', 'pg_control')))
    return false;
  const state = clusterOnDisk(await filesUnder(dataDir));
  if (state === 'unfinished')
    await makeAgain(dataDir, 'a first start was interrupted while it was being made', source);
  else await makeCluster(dataDir, readTar(await source.tarball()), false);
  return true;
}

/** Makes the cluster again if it holds no data (after PGlite failed to open it: `reason`);
 * throws ClusterUnusableError if it does. */
export async function makeAgain(dataDir: string, reason: string, source: ClusterSource): Promise<void> {
  const entries = readTar(await source.tarball());
  const empty = new Set(entries.filter((e) => e.type === 'file').map((e) => e.name));
  if (dataFiles((await filesUnder(dataDir)) ?? [], empty).length)
    throw new ClusterUnusableError(dataDir, reason);
  source.log(`the embedded database in ${dataDir} holds no data and ${reason}: it is made again`);
  await makeCluster(dataDir, entries, true);
}

/** Lays the tarball's cluster down beside `dataDir` and renames it into place. A kill leaves
 * `<dir>.new-<pid>` (half written) or `<dir>.old-<pid>` (a directory shown to hold no data):
 * the next start removes both. */
async function makeCluster(dataDir: string, entries: TarEntry[], replace: boolean): Promise<void> {
  const building = `${dataDir}.new-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { mode: 0o700 });
  // No lock comes with a cluster (an older version's tarballs carry one inside: lock.ts).
  await extractTar(entries, building, (name) => NOT_CLUSTER.has(name));
  if (replace && existsSync(dataDir)) {
    const old = `${dataDir}.old-${process.pid}`;
    await rename(dataDir, old);
    await rename(building, dataDir);
    await rm(old, { recursive: true, force: true });
  } else {
    // Nothing of a cluster is there (an empty directory, or an older version's lock alone).
    await rm(dataDir, { recursive: true, force: true });
    await rename(building, dataDir);
  }
}
