// Which processes are alive, for claims that must not outlive their holder (the embedding queue's):
// each process has an id and a service_nodes row whose `beat_at` it renews every BEAT_SECONDS on
// PostgreSQL; a row not renewed for NODE_TIMEOUT_SECONDS is a dead process, and so is an id
// without a row. On the embedded database one process alone opens the data directory: at start it
// deletes every other row (those processes are gone) and its own row never expires, so nothing
// needs renewing there.
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseHandle } from './database.js';

/** How often a process on PostgreSQL renews its row. */
export const BEAT_SECONDS = 5;
/** A row older than this is a dead process: three beats missed (a stalled event loop, a lost
 * connection or a killed process alike), well within the minute a claim may wait. */
export const NODE_TIMEOUT_SECONDS = 15;

/** SQL: whether the process named by `holder` (a uuid expression) is alive now. */
export function nodeAlive(holder: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from service_nodes n where n.id = ${holder}
    and n.beat_at > now() - make_interval(secs => ${sql.lit(NODE_TIMEOUT_SECONDS)}))`;
}

/** SQL: when the process named by `holder` counts as dead unless it beats again (null when it
 * already does). */
export function nodeExpiry(holder: RawBuilder<unknown>): RawBuilder<Date | null> {
  return sql<Date | null>`(select n.beat_at + make_interval(secs => ${sql.lit(NODE_TIMEOUT_SECONDS)})
    from service_nodes n where n.id = ${holder})`;
}

export class NodeLiveness {
  /** This process's id, named by the claims it makes. */
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly database: DatabaseHandle,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const db = this.database.db;
    if (this.database.kind === 'pglite') {
      await sql`with gone as (delete from service_nodes)
        insert into service_nodes (id, beat_at) values (${this.id}, 'infinity')`.execute(db);
      return;
    }
    // Rows of processes dead for a day go with this start; the others expire by their beat.
    await sql`with gone as (delete from service_nodes where beat_at < now() - interval '1 day')
      insert into service_nodes (id) values (${this.id})`.execute(db);
    this.timer = setInterval(() => void this.beat(), BEAT_SECONDS * 1000);
    this.timer.unref();
  }

  /** Renews this process's row (recreated if it went, as after a database crash). */
  beat(): Promise<void> {
    this.beating ??= sql`insert into service_nodes (id) values (${this.id})
        on conflict (id) do update set beat_at = now()`
      .execute(this.database.db)
      .then(
        () => undefined,
        (err: unknown) =>
          this.log.warn({ err: err instanceof Error ? err.message : err }, 'liveness beat failed'),
      )
      .finally(() => (this.beating = undefined));
    return this.beating;
  }

  /** A clean stop: this process's claims are free at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
    await sql`delete from service_nodes where id = ${this.id}`.execute(this.database.db);
  }
}
