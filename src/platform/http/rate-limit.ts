// Fixed-window counters that every node sees: in Redis when REDIS_URL is set, else in the
// database (rate_limit_counters) on PostgreSQL, else in the process on the embedded database
// (which one process alone opens, so the process's counts are every node's). Used by
// @fastify/rate-limit (as its store), by the failed-login limiter and by the chat limiter, so one
// mechanism serves every limit.
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { sql } from 'kysely';
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { AppError } from './problem.js';

export interface Counter {
  count: number;
  /** Epoch milliseconds at which the window ends. */
  resetAt: number;
}

export interface CounterStore {
  /** Where the counts live (the health route says it). */
  readonly kind: 'database' | 'redis' | 'memory';
  /** Adds one to the key's window (opening a window of windowMs if none is open). */
  hit(key: string, windowMs: number): Promise<Counter>;
  /** The open window, or null. */
  peek(key: string): Promise<Counter | null>;
  reset(key: string): Promise<void>;
  /** Deletes finished windows (the database store only; Redis expires keys itself). */
  sweep(): Promise<number>;
}

export class DbCounterStore implements CounterStore {
  readonly kind = 'database';
  constructor(private readonly db: Db) {}

  async hit(key: string, windowMs: number): Promise<Counter> {
    const r = await sql<{ count: number; reset_at: Date }>`
      insert into rate_limit_counters as c (key, count, reset_at)
      values (${key}, 1, now() + ${windowMs} * interval '1 millisecond')
      on conflict (key) do update set
        count = case when c.reset_at <= now() then 1 else c.count + 1 end,
        reset_at = case when c.reset_at <= now() then excluded.reset_at else c.reset_at end
      returning count, reset_at`.execute(this.db);
    const row = r.rows[0]!;
    return { count: row.count, resetAt: row.reset_at.getTime() };
  }

  async peek(key: string): Promise<Counter | null> {
    const row = await this.db
      .selectFrom('rate_limit_counters')
      .select(['count', 'reset_at'])
      .where('key', '=', key)
      .where('reset_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    return row ? { count: row.count, resetAt: row.reset_at.getTime() } : null;
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limit_counters').where('key', '=', key).execute();
  }

  async sweep(): Promise<number> {
    const r = await this.db
      .deleteFrom('rate_limit_counters')
      .where('reset_at', '<=', sql<Date>`now()`)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** The embedded database's store: one process opens a PGlite data directory, so its counts are
 * all there is, and a hit costs no statement on the database's one connection (the chat turn
 * and every limited route make one). A restart starts the windows again, as a crash of the
 * unlogged table does on PostgreSQL. */
export class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory';
  private readonly windows = new Map<string, Counter>();
  private hitsSinceSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async hit(key: string, windowMs: number): Promise<Counter> {
    const now = this.now();
    // Finished windows go now and then, so keys seen once (an IP, an email) do not pile up.
    if (++this.hitsSinceSweep >= 10_000) void this.sweep();
    const open = this.windows.get(key);
    if (open && open.resetAt > now) {
      open.count++;
      return { ...open };
    }
    const fresh = { count: 1, resetAt: now + windowMs };
    this.windows.set(key, fresh);
    return { ...fresh };
  }

  async peek(key: string): Promise<Counter | null> {
    const open = this.windows.get(key);
    return open && open.resetAt > this.now() ? { ...open } : null;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  async sweep(): Promise<number> {
    this.hitsSinceSweep = 0;
    const now = this.now();
    let n = 0;
    for (const [key, w] of this.windows)
      if (w.resetAt <= now) {
        this.windows.delete(key);
        n++;
      }
    return n;
  }
}

/** The Redis client's options for the counters: a command waits at most a second (a Redis that
 * hangs costs a request that much once, then the store counts in the process until Redis is
 * back), and a command that cannot go out, or is cut off by a lost connection, fails at once
 * rather than being queued and sent on reconnection (the store has counted that hit in the
 * process by then). */
export const REDIS_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 2,
  commandTimeout: 1000,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
};

/** Counts in Redis, shared by every node. While Redis cannot be reached (its connection is not
 * ready, or a command fails) each node counts in its own process instead, so every limit still
 * holds on each node (a deployment of n nodes lets at most n times a limit through) and no request
 * is refused or slowed because Redis went away: failing closed would turn an outage of a counter
 * cache into one of login, chat and uploads, failing open would leave password guessing unbounded.
 * Once Redis is back its counts are used again (its windows went on meanwhile). */
export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis';
  private readonly fallback = new MemoryCounterStore();
  private away = false;

  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
    private readonly prefix = 'rl:',
  ) {
    // ioredis reports each failed reconnection; one line when Redis goes and one when it is back.
    redis.on('error', (err: Error) => this.lost(err));
    redis.on('ready', () => {
      if (!this.away) return;
      this.away = false;
      this.log.info('redis is back: rate-limit counts are shared again');
    });
  }

  private lost(err: unknown) {
    if (this.away) return;
    this.away = true;
    this.log.warn(
      { err: err instanceof Error ? err.message : err },
      'redis unreachable: rate limits are counted per process until it is back',
    );
  }

  /** Runs `op` on Redis when its connection is ready, else (or when it fails) `local`. */
  private async either<T>(op: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') {
      this.lost(new Error(`redis connection ${this.redis.status}`));
      return local();
    }
    try {
      return await op();
    } catch (err) {
      this.lost(err);
      return local();
    }
  }

  hit(key: string, windowMs: number): Promise<Counter> {
    const k = this.prefix + key;
    return this.either(
      async () => {
        const res = await this.redis.multi().incr(k).pexpire(k, windowMs, 'NX').pttl(k).exec();
        if (!res || res.some(([err]) => err))
          throw res?.find(([err]) => err)?.[0] ?? new Error('redis: no answer');
        const count = Number(res[0]![1]);
        const ttl = Number(res[2]![1]);
        return { count, resetAt: Date.now() + (ttl > 0 ? ttl : windowMs) };
      },
      () => this.fallback.hit(key, windowMs),
    );
  }

  peek(key: string): Promise<Counter | null> {
    const k = this.prefix + key;
    return this.either(
      async () => {
        const [count, ttl] = await Promise.all([this.redis.get(k), this.redis.pttl(k)]);
        if (count === null || ttl <= 0) return null;
        return { count: Number(count), resetAt: Date.now() + ttl };
      },
      () => this.fallback.peek(key),
    );
  }

  async reset(key: string): Promise<void> {
    await this.fallback.reset(key);
    await this.either(
      async () => void (await this.redis.del(this.prefix + key)),
      async () => undefined,
    );
  }

  /** Redis expires its keys itself; the windows counted while it was away go here. */
  sweep(): Promise<number> {
    return this.fallback.sweep();
  }
}

/** 429 rate_limited for a window ending at `resetAt`: `retryAfter` (seconds) in the body and the
 * Retry-After header (HTTP routes send it; a socket event carries the body). */
export function rateLimited(resetAt: number, detail: (retrySeconds: number) => string): AppError {
  const retry = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  return new AppError('rate_limited', detail(retry), { retryAfter: retry }, { 'retry-after': String(retry) });
}

/** Counts one more event in the key's window; past `max` throws rate_limited. */
export async function enforceLimit(
  counters: CounterStore,
  key: string,
  max: number,
  windowMs: number,
  what: string,
): Promise<void> {
  const c = await counters.hit(key, windowMs);
  if (c.count > max) throw rateLimited(c.resetAt, (retry) => `At most ${max} ${what}; retry in ${retry} s`);
}

/** Adapts a CounterStore to @fastify/rate-limit's store interface. */
export function rateLimitStore(counters: CounterStore): FastifyRateLimitStoreCtor {
  return class {
    constructor(_options: unknown) {}
    incr(
      key: string,
      cb: (err: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
      counters.hit(`http:${key}`, timeWindow).then(
        (c) => cb(null, { current: c.count, ttl: Math.max(0, c.resetAt - Date.now()) }),
        (err: unknown) => cb(err instanceof Error ? err : new Error(String(err))),
      );
    }
    child() {
      return this;
    }
  };
}
