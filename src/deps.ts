// Composition root: infrastructure first (database, jobs, bus, counters, tokens), then each
// module's service. Nothing else constructs services; tests build the same graph.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle, type Db } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import { EventBus } from './platform/events/bus.js';
import { DbCounterStore, RedisCounterStore, type CounterStore } from './platform/http/rate-limit.js';
import { createMetrics, type Metrics } from './platform/http/metrics.js';
import { JobQueue } from './platform/jobs/queue.js';
import { AccessTokens } from './platform/security/jwt.js';
import { AuthService } from './modules/auth/auth.service.js';
import { UsersService } from './modules/users/users.service.js';
import { defineMaintenanceJobs } from './modules/admin/maintenance.jobs.js';
import { HealthMonitor } from './modules/admin/health.service.js';

export interface Services {
  users: UsersService;
  auth: AuthService;
}

export interface Deps {
  config: Config;
  log: Logger;
  database: DatabaseHandle;
  db: Db;
  jobs: JobQueue;
  bus: EventBus;
  counters: CounterStore;
  tokens: AccessTokens;
  metrics: Metrics;
  health: HealthMonitor;
  redis: Redis | undefined;
  services: Services;
  /** What /api/admin/health reports about the model provider. */
  modelStatus(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface CreateDepsOptions {
  log?: Logger;
  /** PGlite: start from this data-directory tarball (the test template). */
  loadFrom?: string;
  /** Skip the job queue entirely (CLI commands that need no jobs). */
  jobs?: boolean;
}

/** In development a missing JWT_SECRET is generated once and kept in DATA_DIR, so `npm start`
 * needs no configuration and tokens survive restarts. Production refuses (config.ts). */
function resolveJwtSecret(config: Config): string {
  if (config.jwt.secret) return config.jwt.secret;
  mkdirSync(config.dataDir, { recursive: true });
  const path = join(config.dataDir, 'jwt-secret');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(path, secret + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
  return secret;
}

export async function createDeps(config: Config, opts: CreateDepsOptions = {}): Promise<Deps> {
  const log = opts.log ?? pino({ level: config.logLevel });
  const database = await openDatabase({
    url: config.database.url,
    dataDir: config.dataDir,
    poolSize: config.database.poolSize,
    poolTimeoutMs: config.database.poolTimeoutMs,
    schema: config.database.schema,
    loadFrom: opts.loadFrom,
  });
  const cleanup: (() => Promise<unknown>)[] = [() => database.close()];
  try {
    const { applied } = await migrate(database);
    if (applied.length) log.info({ applied }, 'migrations applied');
    const db = database.db;

    const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
    if (redis) cleanup.unshift(() => redis.quit());
    const counters: CounterStore = redis ? new RedisCounterStore(redis) : new DbCounterStore(db);
    const tokens = new AccessTokens({
      secret: resolveJwtSecret(config),
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      ttlSeconds: config.jwt.accessTtl,
    });
    const bus = new EventBus(log);
    const jobs = new JobQueue(database, log);

    const users = new UsersService(db);
    const auth = new AuthService(db, users, tokens, counters, {
      refreshTtlSeconds: config.jwt.refreshTtl,
      loginFailureLimit: config.limits.loginFailures,
      loginFailureWindowSec: config.limits.loginFailureWindowSec,
    });
    const services: Services = { users, auth };

    defineMaintenanceJobs(jobs, db, counters);

    if (opts.jobs !== false) {
      await jobs.start({ work: config.services.includes('worker') });
      cleanup.unshift(() => jobs.stop());
    }

    const health = new HealthMonitor(database);
    await health.start();
    cleanup.unshift(async () => health.stop());

    return {
      config,
      log,
      database,
      db,
      jobs,
      bus,
      counters,
      tokens,
      metrics: createMetrics(),
      health,
      redis,
      services,
      modelStatus: async () => ({
        provider: config.models.baseUrl ? 'openai-compatible' : 'offline',
        chatModel: config.models.baseUrl ? config.models.chatModel : 'offline',
      }),
      async close() {
        for (const fn of cleanup.splice(0)) {
          try {
            await fn();
          } catch (err) {
            log.warn({ err }, 'error during shutdown');
          }
        }
      },
    };
  } catch (err) {
    for (const fn of cleanup) await fn().catch(() => undefined);
    throw err;
  }
}
