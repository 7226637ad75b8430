// What a data directory holds, told from its files' names alone (cluster-dir.ts lists them).

/** Files in a data directory that are no part of its cluster: the lock an older version of the
 * service kept inside it. */
export const NOT_CLUSTER = new Set(['server.lock']);

/** 'none': no directory, or nothing of a cluster in it (a new one is made). 'whole': the files
 * a cluster starts from are there (it is opened as it is). 'unfinished': a cluster was begun and
 * never finished (an older version, killed while laying one down). */
export type ClusterOnDisk = 'none' | 'whole' | 'unfinished';

export function clusterOnDisk(files: readonly string[] | undefined): ClusterOnDisk {
  const cluster = (files ?? []).filter((f) => !NOT_CLUSTER.has(f));
  if (cluster.length === 0) return 'none';
  return cluster.includes('PG_VERSION') && cluster.includes('global/pg_control') ? 'whole' : 'unfinished';
}

/** The files of a data directory that are not among the empty cluster's: where its data is. A
 * directory with none holds nothing to keep, whatever state it is in, and may be made again. */
export function dataFiles(files: readonly string[], emptyCluster: ReadonlySet<string>): string[] {
  return files.filter((f) => !NOT_CLUSTER.has(f) && !emptyCluster.has(f));
}
