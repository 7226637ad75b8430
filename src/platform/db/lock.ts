// PGlite's data directory may be opened by one process only; a second one would corrupt it.
// A lock file holding the owner's pid makes the second process stop with a clear message.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDataDirLock(dir: string): DataDirLock {
  const path = join(dir, 'server.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { release: () => rmSync(path, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
        throw new DataDirLockedError(dir, pid);
      // A stale lock from a process that died: take it over.
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
}
