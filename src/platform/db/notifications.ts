// Change notices between the nodes of one deployment (ARCHITECTURE.md, "Scale-out"): a node that
// changes something other nodes cache says so on a channel, and every node (itself included) hears
// it. A write says its notices through its unit of work (`noticeLater`, the `notices` kind), heard
// once the unit committed, never for a rollback. On PostgreSQL they are NOTIFYs in the unit's
// transaction, all of one flush in one statement, and each node keeps one connection of its own
// LISTENing; the embedded database serves one process, so notices stay in it.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import { sql, type DatabaseHandle } from './database.js';
import type { Flusher, UnitOfWork } from './unit-of-work.js';

export interface Notice {
  channel: string;
  payload: string;
}

declare module './unit-of-work.js' {
  interface UnitOfWorkKinds {
    notices: { item: Notice; result: void };
  }
}

/** Adds a notice to the unit: said at its flush, in its transaction, so every node hears it once
 * the unit committed (never for a rollback). */
export function noticeLater(uow: UnitOfWork, channel: string, payload: string) {
  return uow.add('notices', { channel, payload });
}

export interface ChangeListener {
  /** A notice's payload. */
  onNotice(payload: string): void;
  /** Notices may have been missed (the listening connection was lost and is back): forget all. */
  onReset(): void;
}

export interface ChangeFeed {
  /** The `notices` kind's flusher (startup/platform.ts): every notice of a flush at once. */
  flush: Flusher<'notices'>;
  listen(channel: string, listener: ChangeListener): () => void;
  close(): Promise<void>;
}

/** One process: notices are delivered at once, in it. */
export class LocalChangeFeed implements ChangeFeed {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(100);
  }
  /** Heard in this process once the unit committed, as PostgreSQL delivers a NOTIFY. */
  readonly flush: Flusher<'notices'> = async (uow, notices) => {
    uow.afterCommit(() => {
      for (const n of notices) this.emitter.emit(n.channel, n.payload);
    });
    return notices.map(() => undefined);
  };
  listen(channel: string, listener: ChangeListener): () => void {
    const on = (payload: string) => listener.onNotice(payload);
    this.emitter.on(channel, on);
    return () => this.emitter.off(channel, on);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** PostgreSQL LISTEN/NOTIFY on a connection of its own, reconnected after a loss. */
export class PgChangeFeed implements ChangeFeed {
  private readonly listeners = new Map<string, Set<ChangeListener>>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The LISTENs asked while connected, in order. */
  private listening: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly url: string,
    /** NOTIFY channels are database-wide: deployments (and test schemas) sharing a database must
     * not hear each other. */
    private readonly prefix: string,
    private readonly log: Logger,
    private readonly retryMs = 1000,
  ) {}

  private channel(name: string) {
    return `${this.prefix}:${name}`;
  }

  /** One `pg_notify` per notice in one statement, sent with the unit's other statements. */
  readonly flush: Flusher<'notices'> = async (uow, notices) => {
    const channels = notices.map((n) => this.channel(n.channel));
    const payloads = notices.map((n) => n.payload);
    void uow.send(
      sql`select pg_notify(n.c, n.p) from unnest(${channels}::text[], ${payloads}::text[]) as n(c, p)`.execute(
        uow.trx,
      ),
    );
    return notices.map(() => undefined);
  };

  listen(channel: string, listener: ChangeListener): () => void {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      // One after another: a client runs one query at a time (node-postgres deprecates queueing).
      const client = this.client;
      if (client)
        this.listening = this.listening
          .then(() => client.query(`LISTEN ${pg.escapeIdentifier(this.channel(channel))}`))
          // A connection lost meanwhile listens to every channel again when it reconnects, and
          // one being closed needs none: the LISTEN's failure is nobody's error.
          .catch(() => undefined);
    }
    set.add(listener);
    if (!this.client && !this.connecting) this.connecting = this.connect();
    return () => set.delete(listener);
  }

  /** Resolves once the LISTEN connection is up (tests and start-up wait for it). */
  async ready(): Promise<void> {
    while (!this.closed && !this.client) {
      this.connecting ??= this.connect();
      await this.connecting;
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    try {
      await client.connect();
      for (const channel of this.listeners.keys())
        await client.query(`LISTEN ${pg.escapeIdentifier(this.channel(channel))}`);
    } catch (err) {
      this.log.warn({ err }, 'change feed: cannot listen; retrying');
      await client.end().catch(() => undefined);
      this.connecting = undefined;
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    client.on('notification', (msg) => {
      const prefix = `${this.prefix}:`;
      if (!msg.channel.startsWith(prefix)) return;
      for (const l of this.listeners.get(msg.channel.slice(prefix.length)) ?? [])
        l.onNotice(msg.payload ?? '');
    });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = undefined;
      if (err) this.log.warn({ err }, 'change feed: connection lost; reconnecting');
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      this.scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    this.client = client;
    this.connecting = undefined;
    // Whatever was said while no connection listened is unknown: the listeners start afresh.
    for (const set of this.listeners.values()) for (const l of set) l.onReset();
  }

  private scheduleRetry() {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed && !this.client && !this.connecting) this.connecting = this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
    this.listeners.clear();
  }
}

export function createChangeFeed(database: DatabaseHandle, url: string | undefined, log: Logger): ChangeFeed {
  if (database.kind !== 'postgres' || !url) return new LocalChangeFeed();
  return new PgChangeFeed(url, `ap#${database.schema ?? 'public'}`, log);
}
