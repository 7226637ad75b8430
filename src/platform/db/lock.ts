// PGlite's data directory may be opened by one process only; a second one would corrupt it.
// A lock file beside it (`<dir>.lock`, outside the cluster: nothing a cluster is made from can
// carry it) holds the owner's pid and, on Linux, the process's start time, so a pid reused by
// another process after the owner died is not taken for the owner. A second process stops with a
// clear message.
import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';

export interface DataDirLock {
  release(): void;
}

export class DataDirLockedError extends Error {
  constructor(
    public readonly dir: string,
    public readonly pid: number,
  ) {
    // The CLI's case; main.ts words its own line from dir and pid.
    super(
      `the embedded database in ${dir} is in use by process ${pid} (a running server?): only one ` +
        `process may open it. Stop that process first, or do this through the running server: the ` +
        `admin API with an administrator's token (the first administrator comes from ADMIN_EMAIL and ` +
        `ADMIN_PASSWORD at the server's start; README, "The first administrator")`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** The lock file of the data directory `dir`. */
export function lockPath(dir: string): string {
  return `${dir}.lock`;
}

/** A process's start time in clock ticks since boot (Linux's /proc), or undefined elsewhere. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: the fields after it are counted from its `)`.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The pid the lock names, if that process is running now. */
export function liveHolder(content: string): number | undefined {
  const [pidText, started] = content.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  // The pid runs: the same process only if it started when the lock says (when both are known).
  const now = startTime(pid);
  if (started && now && started !== now) return undefined;
  return pid;
}

export function acquireDataDirLock(dir: string): DataDirLock {
  const path = lockPath(dir);
  const mine = `${process.pid} ${startTime(process.pid) ?? ''}`.trim();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, mine);
      closeSync(fd);
      return {
        release: () => {
          try {
            if (readFileSync(path, 'utf8') === mine) rmSync(path, { force: true });
          } catch {
            // Gone already.
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let content: string;
      try {
        content = readFileSync(path, 'utf8');
      } catch {
        continue; // released meanwhile
      }
      const pid = liveHolder(content);
      if (pid !== undefined) throw new DataDirLockedError(dir, pid);
      // A stale lock of a process that died: moved aside before it is removed, and put back if
      // what was moved is not what was read (a process that took it over meanwhile).
      const aside = `${path}.${process.pid}.stale`;
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      if (readFileSync(aside, 'utf8') !== content) {
        try {
          linkSync(aside, path);
        } catch {
          // Another lock is in place already.
        }
      }
      rmSync(aside, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
}
