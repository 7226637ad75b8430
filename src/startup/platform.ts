// The infrastructure a process opens before any module: the database (migrated), Redis
// (optional), the counters, the access-token signer, the event bus, the job queue (defined now,
// started with the workers), the registry of what a write's unit of work flushes (the jobs kind
// defined here; the modules' kinds and subscribers in deps.ts) and the feed of changes other
// nodes announce.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { openDatabase, type OpenDatabaseOptions } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrate.js';
import { unitOfWorkRegistry } from '../platform/db/unit-of-work.js';
import { createChangeFeed } from '../platform/db/notifications.js';
import { EventBus } from '../platform/events/bus.js';
import {
  DbCounterStore,
  MemoryCounterStore,
  RedisCounterStore,
  REDIS_OPTIONS,
  type CounterStore,
} from '../platform/http/rate-limit.js';
import { flushJobs } from '../platform/jobs/later.js';
import { JobQueue } from '../platform/jobs/queue.js';
import { AccessTokens } from '../platform/security/jwt.js';
import { resolveJwtSecret } from './secret.js';
import type { Closers } from './workers.js';
import { Drain } from '../platform/drain.js';

export type Platform = Awaited<ReturnType<typeof openPlatform>>;

/** How the embedded database starts: from the test harness's template, on a server it keeps, or on
 * the server main.ts started early. */
export type EmbeddedStart = Pick<OpenDatabaseOptions, 'loadFrom' | 'embedded' | 'starting'>;

/** Opens the database and migrates it, then the rest. The counters are Redis's, else the
 * database's on PostgreSQL, else this process's memory. */
export async function openPlatform(config: Config, log: Logger, embedded: EmbeddedStart, closers: Closers) {
  const database = await openDatabase({
    url: config.database.url,
    dataDir: config.dataDir,
    poolSize: config.database.poolSize,
    poolTimeoutMs: config.database.poolTimeoutMs,
    preparedStatements: config.database.preparedStatements,
    schema: config.database.schema,
    log: (line) => log.warn(line),
    ...embedded,
  });
  closers.unshift(() => database.close());
  const { applied } = await migrate(database, { pgvector: config.database.pgvector });
  if (applied.length) log.info({ applied }, 'migrations applied');
  const db = database.db;
  // ioredis is loaded only when configured (it costs a start that does not use it tens of ms).
  const redis = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, REDIS_OPTIONS)
    : undefined;
  if (redis) closers.unshift(() => redis.quit());
  const counters: CounterStore = redis
    ? new RedisCounterStore(redis, log)
    : database.kind === 'pglite'
      ? new MemoryCounterStore()
      : new DbCounterStore(db);
  const jwtSecret = resolveJwtSecret(config);
  const tokens = new AccessTokens({
    secret: jwtSecret,
    previousSecrets: config.jwt.previousSecrets,
    issuer: config.jwt.issuer,
    audience: config.jwt.audience,
    ttlSeconds: config.jwt.accessTtl,
  });
  const bus = new EventBus(log);
  const jobs = new JobQueue(database, log);
  const writes = unitOfWorkRegistry(db);
  writes.define('jobs', flushJobs(jobs));
  const changes = createChangeFeed(database, config.database.url, log);
  writes.define('notices', changes.flush);
  closers.unshift(() => changes.close());
  const drain = new Drain();
  return { config, log, database, db, redis, counters, jwtSecret, tokens, bus, jobs, writes, changes, drain };
}
