// Health answers from a probe that runs in the background, so a liveness check never queues
// behind a slow query on the embedded database's single connection: the event loop answers at
// once, and the answer says how fresh the database probe is.
import { statfs } from 'node:fs/promises';
import { sql } from 'kysely';
import type { DatabaseHandle } from './database.js';
import { clearDiskFull, lastDiskFull } from './errors.js';
import { migrationStatus } from './migrate.js';

/** Free bytes on the embedded database's file system that count as space being back. */
const ROOM_BYTES = 16 * 1024 * 1024;
/** On PostgreSQL (whose disk this process cannot see), how long a full disk is reported. */
const DISK_FULL_REPORTED_MS = 60_000;

export interface DatabaseHealth {
  ok: boolean;
  /** A write failed for lack of disk space and space has not been seen back since. */
  diskFull?: boolean;
  checkedAt: number;
  migrations: { applied: number; pending: number; latest: string | null };
}

export class HealthMonitor {
  private last: DatabaseHealth = {
    ok: false,
    checkedAt: 0,
    migrations: { applied: 0, pending: 0, latest: null },
  };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly database: DatabaseHandle,
    private readonly intervalMs = 2000,
  ) {}

  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  probe(): Promise<void> {
    this.running ??= (async () => {
      try {
        await this.checkSpace();
        await sql`select 1`.execute(this.database.db);
        this.last = { ok: true, checkedAt: Date.now(), migrations: await migrationStatus(this.database) };
      } catch {
        this.last = { ...this.last, ok: false, checkedAt: Date.now() };
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** After a full disk: clears it once the data directory's file system has room again (PGlite)
   * or a while has passed (PostgreSQL's disk is the server's). */
  private async checkSpace(): Promise<void> {
    const at = lastDiskFull();
    if (at === 0) return;
    const dir = this.database.dataDir;
    if (dir) {
      const fs = await statfs(dir).catch(() => undefined);
      if (fs && fs.bavail * fs.bsize >= ROOM_BYTES) clearDiskFull();
    } else if (Date.now() - at > DISK_FULL_REPORTED_MS) clearDiskFull();
  }

  /** The latest probe; a probe older than five intervals counts as a failure (database stuck). */
  snapshot(): DatabaseHealth & { ageMs: number } {
    const ageMs = Date.now() - this.last.checkedAt;
    return {
      ...this.last,
      ok: this.last.ok && ageMs < this.intervalMs * 5,
      diskFull: lastDiskFull() > 0,
      ageMs,
    };
  }
}
