// Health answers from a probe that runs in the background, so a liveness check never queues
// behind a slow query on the embedded database's single connection: the event loop answers at
// once, and the answer says how fresh the database probe is.
import { sql } from 'kysely';
import type { DatabaseHandle } from './database.js';
import { migrationStatus } from './migrate.js';

export interface DatabaseHealth {
  ok: boolean;
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

  /** The latest probe; a probe older than five intervals counts as a failure (database stuck). */
  snapshot(): DatabaseHealth & { ageMs: number } {
    const ageMs = Date.now() - this.last.checkedAt;
    return { ...this.last, ok: this.last.ok && ageMs < this.intervalMs * 5, ageMs };
  }
}
