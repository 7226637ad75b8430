// The environment's variables as config.ts parses them: each one's type, bounds and default.
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const intList = csv.transform((list) => list.map(Number)).pipe(z.array(z.number().int().positive()));
const seconds = z.coerce.number().int().positive();
const positiveInt = z.coerce.number().int().positive();
const ownerAndName = z.string().regex(/^[\w.-]+\/[\w.-]+$/);

export const oauthProvider = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/),
    issuer: z.url().optional(),
    authorizationUrl: z.url().optional(),
    tokenUrl: z.url().optional(),
    userinfoUrl: z.url().optional(),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    scopes: z.array(z.string()).default(['openid', 'email', 'profile']),
    tokenAuthMethod: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
  })
  .refine((p) => p.issuer !== undefined || (p.authorizationUrl && p.tokenUrl && p.userinfoUrl), {
    message: 'a provider needs issuer, or authorizationUrl + tokenUrl + userinfoUrl',
  });

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: z.url().optional(),
  CORS_ORIGINS: csv
    .pipe(
      z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'each origin is scheme://host[:port], nothing after')),
    )
    .default([]),
  APP_URL: z.url().optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  DB_POOL_SIZE: z.coerce.number().int().positive().default(10),
  DB_POOL_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  DB_PREPARED_STATEMENTS: bool.default(true),
  DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/)
    .optional(),
  PGVECTOR: z.enum(['auto', 'off']).default('auto'),
  JWT_SECRET: z.string().optional(),
  JWT_PREVIOUS_SECRETS: csv.default([]),
  JWT_ISSUER: z.string().default('assistant-platform'),
  JWT_AUDIENCE: z.string().default('assistant-platform'),
  ACCESS_TOKEN_TTL: seconds.default(3600),
  REFRESH_TOKEN_TTL: seconds.default(30 * 24 * 3600),
  ACCOUNT_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
  RECORD_CACHE_MS: z.coerce.number().int().min(0).max(3_600_000).default(300_000),
  ADMIN_USER_IDS: intList.default([]),
  ADMIN_EMAIL: z.string().trim().max(254).pipe(z.email()).optional(),
  ADMIN_PASSWORD: z.string().min(8).max(256).optional(),
  ASSISTANT_NAME: z.string().min(1).default('Assistant'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['pretty', 'json']).optional(),
  MODEL_BASE_URL: z.url().optional(),
  MODEL_API_KEY: z.string().optional(),
  CHAT_MODEL: z.string().default('gpt-4o-mini'),
  EMBEDDING_MODEL: z.string().default('text-embedding-3-small'),
  VISION_MODEL: z.string().optional(),
  OFFLINE_EMBEDDING_MODEL: z
    .enum(['offline-glove-sif-v1', 'offline-hash-ngram-v1'])
    .default('offline-glove-sif-v1'),
  EMBEDDING_DIMENSIONS: z.coerce.number().int().positive().max(4096).optional(),
  MODEL_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  MODEL_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  MODEL_CONCURRENCY: z.coerce.number().int().positive().default(8),
  MODEL_RETRY_BASE_MS: z.coerce.number().int().min(0).default(500),
  MEMORY_CHUNK_SIZE: z.coerce.number().int().min(200).max(8000).default(1000),
  MEMORY_CHUNK_OVERLAP: z.coerce.number().int().min(0).max(2000).default(200),
  MEMORY_EMBED_BATCH: z.coerce.number().int().min(1).max(2048).default(64),
  MEMORY_SKETCH_CACHE_MB: z.coerce.number().int().min(1).max(1_000_000).default(256),
  MEMORY_RECONCILE: z.enum(['model', 'rules', 'off']).optional(),
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('Assistant Platform <no-reply@localhost>'),
  OAUTH_PROVIDERS: z.string().optional(),
  BLOCKED_COUNTRIES: csv.default([]),
  COUNTRY_HEADER: z.string().optional(),
  EMAIL_VERIFICATION_TTL: seconds.default(24 * 3600),
  PASSWORD_RESET_TTL: seconds.default(3600),
  ACCOUNT_MAIL_PER_HOUR: z.coerce.number().int().positive().default(5),
  OAUTH_STATE_TTL: seconds.default(600),
  OAUTH_TIMEOUT: seconds.default(10),
  REDIS_URL: z.string().optional(),
  TRUST_PROXY: bool.default(false),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('assistant-platform'),
  SERVICES: csv.pipe(z.array(z.enum(['api', 'worker'])).min(1)).default(['api', 'worker']),
  BODY_LIMIT: positiveInt.default(1024 * 1024),
  UPLOAD_LIMIT: positiveInt.default(20 * 1024 * 1024),
  UPLOAD_MAX_FILES: z.coerce.number().int().positive().max(100).default(10),
  UPLOAD_RATE_LIMIT: z.coerce.number().int().positive().default(30),
  UPLOAD_QUOTA_BYTES: positiveInt.default(256 * 1024 * 1024),
  UPLOAD_RETENTION_DAYS: z.coerce.number().int().positive().default(30),
  ATTACHMENT_MAX_BYTES: positiveInt.default(5 * 1024 * 1024),
  ATTACHMENT_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
  SOCKETS_PER_USER: z.coerce.number().int().positive().default(20),
  SOCKET_AUTH_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  AUTH_RATE_LIMIT: z.coerce.number().int().positive().default(60),
  PLAYERS_RATE_LIMIT: z.coerce.number().int().positive().default(600),
  LOGIN_FAILURE_LIMIT: z.coerce.number().int().positive().default(10),
  LOGIN_FAILURE_WINDOW: seconds.default(15 * 60),
  CHAT_RATE_LIMIT: z.coerce.number().int().positive().default(30),
  CHAT_TOOL_CALLS_PER_TURN: z.coerce.number().int().min(0).max(20).default(3),
  CHAT_HISTORY_MESSAGES: z.coerce.number().int().min(0).max(200).default(12),
  CHAT_CONTEXT_TOKENS: z.coerce.number().int().min(100).max(100_000).default(3000),
  CHAT_PLATFORM_BOT_TOKEN: z.string().optional(),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(10_000),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(8),
  WEBHOOK_RETRY_DELAY: z.coerce.number().int().min(1).max(3600).default(10),
  WEBHOOK_SECRET_KEY: z.string().optional(),
  WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().positive().default(30),
  TOOL_APPROVAL_URL: z.url().optional(),
  TOOL_APPROVAL_SECRET: z.string().min(16).optional(),
  TOOL_APPROVAL_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(3000),
  METRICS_TOKEN: z.string().min(16).optional(),
  ISSUE_TRACKER_TOKEN: z.string().optional(),
  ISSUE_TRACKER_REPO: ownerAndName.optional(),
  ISSUE_TRACKER_API_URL: z.url().default('https://api.github.com'),
  ISSUE_TRACKER_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(8),
  ISSUE_TRACKER_RETRY_DELAY: z.coerce.number().int().min(1).max(3600).default(10),
  AUDIT_LOG: z.enum(['writes', 'all', 'off']).default('writes'),
  AUDIT_LOG_RETENTION_DAYS: z.coerce.number().int().positive().max(3650).default(90),
  SCHEDULER_INTERVAL: z.coerce.number().int().min(1).max(45).default(30),
  SSRF_ALLOW_LOOPBACK_FOR_TESTS: bool.default(false),
  MEMORY_MAX_CONTENT: positiveInt.default(32 * 1024),
  TRAINING_FILE_LIMIT: z.coerce.number().int().positive().optional(),
  TRAINING_MAX_PAGES: z.coerce.number().int().positive().default(300),
  TRAINING_MAX_CHARS: z.coerce.number().int().positive().default(600_000),
  TRAINING_IMAGE_LIMIT: positiveInt.default(10 * 1024 * 1024),
});
