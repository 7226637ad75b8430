// The only reader of process.env. Every variable is parsed here once; a bad value is reported
// together with every other bad value, and the process refuses to start.
import { z } from 'zod';
import { ConfigError, issueMessage, shown } from './config.problems.js';
import { envSchema, oauthProvider } from './config.schema.js';

export { ConfigError };

export type Env = z.infer<typeof envSchema>;
export type OAuthProviderConfig = z.infer<typeof oauthProvider>;

export interface Config {
  env: Env['NODE_ENV'];
  port: number;
  host: string;
  publicUrl: string;
  /** Origins whose pages may call REST and Socket.IO (CORS); empty: the same origin only. */
  corsOrigins: string[];
  appUrl: string;
  dataDir: string;
  /** `postgres://…` for a server, `memory://` or a directory for embedded PGlite. */
  database: {
    url: string | undefined;
    poolSize: number;
    poolTimeoutMs: number;
    /** DB_PREPARED_STATEMENTS: statements with parameters run prepared (named-statements.ts); off
     * behind a connection pooler that cannot keep a session's prepared statements. */
    preparedStatements: boolean;
    schema: string | undefined;
    /** PGVECTOR: use pgvector when the server offers it (`auto`), or the sketch fallback (`off`);
     * decided when the database is first migrated. */
    pgvector: boolean;
  };
  jwt: {
    /** The current signing secret (JWT_SECRET); unset: the generated development one. */
    secret: string | undefined;
    /** Earlier secrets still accepted for verification (JWT_PREVIOUS_SECRETS): a rotation's. */
    previousSecrets: string[];
    issuer: string;
    audience: string;
    accessTtl: number;
    refreshTtl: number;
  };
  adminUserIds: number[];
  /** ADMIN_EMAIL and ADMIN_PASSWORD: the first administrator (a CSO), made at start while no CSO
   * exists. */
  firstAdmin: { email: string; password: string } | undefined;
  /** How long a node may answer from an account's cached role, type and ended sessions when no
   * change notice reaches it (milliseconds). */
  accountCacheMs: number;
  /** How long a node may answer from a cached character profile, routing protocol or
   * conversation when no change notice reaches it (milliseconds). */
  recordCacheMs: number;
  assistantName: string;
  logLevel: Env['LOG_LEVEL'];
  /** LOG_FORMAT: one line per record for people (`pretty`, the default in development) or one
   * JSON object per line (the default otherwise). */
  logFormat: 'pretty' | 'json';
  models: {
    baseUrl: string | undefined;
    apiKey: string | undefined;
    chatModel: string;
    embeddingModel: string;
    /** The embedder without a model server (OFFLINE_EMBEDDING_MODEL): semantic (the default) or lexical. */
    offlineEmbeddingModel: 'offline-glove-sif-v1' | 'offline-hash-ngram-v1';
    visionModel: string | undefined;
    embeddingDimensions: number | undefined;
    timeoutMs: number;
    maxRetries: number;
    concurrency: number;
    /** First retry delay in ms; doubles per retry (MODEL_RETRY_BASE_MS). */
    retryBaseMs: number;
  };
  /** Memory chunking and embedding (MEMORY_CHUNK_SIZE, MEMORY_CHUNK_OVERLAP in characters; MEMORY_EMBED_BATCH texts per embedding request; MEMORY_SKETCH_CACHE_MB of sketches a process keeps for the vector side without pgvector). */
  memory: {
    chunkSize: number;
    chunkOverlap: number;
    embedBatch: number;
    sketchCacheBytes: number;
    /** How a new exchange is reconciled with what is stored (MEMORY_RECONCILE): by the model in
     * the background, by the offline "my X is Y" rules, or not at all. Default: the model when
     * MODEL_BASE_URL is set, else the rules. */
    reconcile: 'model' | 'rules' | 'off';
  };
  mail: { smtpUrl: string | undefined; from: string };
  oauth: { providers: OAuthProviderConfig[]; blockedCountries: string[]; countryHeader: string | undefined };
  /** Email verification and reset links: lifetimes in seconds, and mails per address and purpose per hour. */
  accountEmail: { verifyTtl: number; resetTtl: number; mailsPerHour: number };
  /** External login: seconds a started login may take, and the timeout of each request to a provider. */
  oauthFlow: { stateTtl: number; providerTimeout: number };
  /** The chat-platform (Discord) bot: its token starts the adapter; unset, nothing connects. */
  chatPlatform: { botToken: string | undefined };
  /** Outbound webhooks: each delivery's time, attempts in all, first retry delay (seconds,
   * doubling), the key that encrypts the stored signing secrets (32 bytes; unset: derived from
   * the JWT secret), how long finished deliveries are logged. */
  webhooks: {
    timeoutMs: number;
    maxAttempts: number;
    retryDelaySeconds: number;
    secretKey: Buffer | undefined;
    deliveryRetentionDays: number;
  };
  /** The issue tracker (GitHub's REST issues API) where collected artifacts are filed: its token
   * (a secret), repository `owner/name`, API base URL, attempts in all and first retry delay
   * (seconds, doubling). Unset (no token and repository): no issue is filed. */
  tracker:
    | { token: string; repo: string; apiUrl: string; maxAttempts: number; retryDelaySeconds: number }
    | undefined;
  /** The audit log: `writes` (every write and every 401, 403 and 5xx), `all` requests, or `off`;
   * how many days entries are kept. */
  audit: { mode: 'writes' | 'all' | 'off'; retentionDays: number };
  /** The game's approval of each economy tool change: POSTed to `url` signed with `secret` (as
   * webhooks are), applied only on a 2xx within `timeoutMs`. Unset: no approval asked. */
  toolApproval: { url: string; secret: string; timeoutMs: number } | undefined;
  /** The bearer token `/metrics` asks for; unset: it answers on loopback only. */
  metricsToken: string | undefined;
  /** Scheduled tasks: seconds between the scheduler's passes over the cron schedules (one pass per
   * interval across every node; occurrences are due for a minute). */
  scheduler: { intervalSeconds: number };
  /** Tests only (refused unless NODE_ENV=test): outbound URLs (webhooks) may reach a loopback
   * address, where the test's receiver listens. Every other address stays refused. */
  allowLoopbackTargetsForTests: boolean;
  /** NPC training: bytes per training file (TRAINING_FILE_LIMIT, default UPLOAD_LIMIT), pages per
   * PDF, characters kept of a file's text, bytes per screenshot. */
  training: { fileBytes: number; maxPages: number; maxChars: number; imageBytes: number };
  redisUrl: string | undefined;
  trustProxy: boolean;
  /** A drain's limit (SIGTERM): how long running requests, chat turns and jobs may take to finish
   * before the node stops anyway (its jobs handed back to the queue). */
  shutdownGraceMs: number;
  /** OpenTelemetry traces: the OTLP/HTTP URL spans are sent to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
   * else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces); undefined: no tracing at all. */
  tracing: { url: string | undefined; serviceName: string };
  services: ('api' | 'worker')[];
  limits: {
    bodyBytes: number;
    uploadBytes: number;
    /** Files per upload request. */
    uploadFiles: number;
    /** Upload requests per minute per user. */
    uploadsPerMinute: number;
    /** Bytes of stored uploads per user (every context not yet deleted or expired). */
    uploadQuotaBytes: number;
    /** Days an upload context is kept; the hourly maintenance sweep deletes older ones. */
    uploadRetentionDays: number;
    /** Attachment URLs fetched server-side (safe-fetch): size and time caps per URL. */
    attachmentBytes: number;
    attachmentTimeoutMs: number;
    /** A request (headers and body) must have arrived within this long (408 otherwise). */
    requestTimeoutMs: number;
    /** Sockets one account may hold open per namespace in one process (429 at connect past it). */
    socketsPerUser: number;
    /** A Socket.IO connection that has not authenticated (joined a namespace) within this long is
     * closed. */
    socketAuthTimeoutMs: number;
    authPerMinute: number;
    /** Player sign-ins per minute per API key (POST /api/sync/players). */
    playersPerMinute: number;
    loginFailures: number;
    loginFailureWindowSec: number;
    chatPerMinute: number;
    chatToolCallsPerTurn: number;
    chatHistoryMessages: number;
    chatContextTokens: number;
    memoryContentBytes: number;
  };
}

/** Parses an environment (process.env by default); throws ConfigError listing every bad variable,
 * each with the value given (secrets by their length only). */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, so `FOO=` in a shell does not override a default with "".
  const raw = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  // Every bad variable with its reasons, in the schema's order; all checks run before reporting.
  const bad = new Map<string, string[]>();
  const problem = (name: string, message: string) => bad.set(name, [...(bad.get(name) ?? []), message]);
  const parsed = envSchema.safeParse(raw, { error: issueMessage });
  if (!parsed.success)
    for (const issue of parsed.error.issues) problem(String(issue.path[0] ?? '(environment)'), issue.message);

  let providers: OAuthProviderConfig[] = [];
  if (raw.OAUTH_PROVIDERS) {
    try {
      const list = z.array(oauthProvider).safeParse(JSON.parse(raw.OAUTH_PROVIDERS), { error: issueMessage });
      if (list.success) providers = list.data;
      else
        for (const issue of list.error.issues)
          problem('OAUTH_PROVIDERS', `${issue.path.join('.') || '(list)'}: ${issue.message}`);
    } catch {
      problem('OAUTH_PROVIDERS', 'not valid JSON');
    }
  }
  if (raw.JWT_SECRET !== undefined && Buffer.byteLength(raw.JWT_SECRET) < 32)
    problem('JWT_SECRET', 'must be at least 32 bytes');
  const previousSecrets = raw.JWT_PREVIOUS_SECRETS?.split(',').map((s) => s.trim()) ?? [];
  if (previousSecrets.some((s) => s !== '' && Buffer.byteLength(s) < 32))
    problem('JWT_PREVIOUS_SECRETS', 'each must be at least 32 bytes');
  if (raw.NODE_ENV === 'production' && raw.JWT_SECRET === undefined)
    problem('JWT_SECRET', 'required when NODE_ENV=production');
  if ((raw.ADMIN_EMAIL === undefined) !== (raw.ADMIN_PASSWORD === undefined))
    problem(
      raw.ADMIN_EMAIL === undefined ? 'ADMIN_EMAIL' : 'ADMIN_PASSWORD',
      'ADMIN_EMAIL and ADMIN_PASSWORD go together',
    );
  if (raw.MEMORY_RECONCILE === 'model' && !raw.MODEL_BASE_URL)
    problem('MEMORY_RECONCILE', 'model needs MODEL_BASE_URL (offline, use rules)');
  if (raw.DATABASE_URL && !/^(postgres(ql)?:\/\/|memory:\/\/)/.test(raw.DATABASE_URL))
    problem('DATABASE_URL', 'must be a postgres:// URL (or memory:// for a throwaway embedded database)');
  let webhookKey: Buffer | undefined;
  if (raw.WEBHOOK_SECRET_KEY !== undefined) {
    webhookKey = Buffer.from(raw.WEBHOOK_SECRET_KEY, 'base64');
    if (webhookKey.length !== 32) problem('WEBHOOK_SECRET_KEY', 'must be 32 bytes, base64-encoded');
  }
  if ((raw.TOOL_APPROVAL_URL === undefined) !== (raw.TOOL_APPROVAL_SECRET === undefined))
    problem(
      raw.TOOL_APPROVAL_URL === undefined ? 'TOOL_APPROVAL_URL' : 'TOOL_APPROVAL_SECRET',
      'TOOL_APPROVAL_URL and TOOL_APPROVAL_SECRET go together',
    );
  if ((raw.ISSUE_TRACKER_TOKEN === undefined) !== (raw.ISSUE_TRACKER_REPO === undefined))
    problem(
      raw.ISSUE_TRACKER_TOKEN === undefined ? 'ISSUE_TRACKER_TOKEN' : 'ISSUE_TRACKER_REPO',
      'ISSUE_TRACKER_TOKEN and ISSUE_TRACKER_REPO go together',
    );
  if (parsed.success && parsed.data.SSRF_ALLOW_LOOPBACK_FOR_TESTS && parsed.data.NODE_ENV !== 'test')
    problem('SSRF_ALLOW_LOOPBACK_FOR_TESTS', 'only allowed when NODE_ENV=test');
  if (bad.size > 0 || !parsed.success)
    throw new ConfigError(
      [...bad].map(([name, reasons]) => `${shown(name, raw[name])}: ${reasons.join('; ')}`),
    );
  const e = parsed.data;

  const publicUrl = (e.PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/$/, '');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    corsOrigins: e.CORS_ORIGINS,
    appUrl: (e.APP_URL ?? publicUrl).replace(/\/$/, ''),
    dataDir: e.DATA_DIR,
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DB_POOL_SIZE,
      poolTimeoutMs: e.DB_POOL_TIMEOUT_MS,
      preparedStatements: e.DB_PREPARED_STATEMENTS,
      schema: e.DB_SCHEMA,
      pgvector: e.PGVECTOR === 'auto',
    },
    jwt: {
      secret: e.JWT_SECRET,
      previousSecrets: e.JWT_PREVIOUS_SECRETS,
      issuer: e.JWT_ISSUER,
      audience: e.JWT_AUDIENCE,
      accessTtl: e.ACCESS_TOKEN_TTL,
      refreshTtl: e.REFRESH_TOKEN_TTL,
    },
    adminUserIds: e.ADMIN_USER_IDS,
    firstAdmin:
      e.ADMIN_EMAIL && e.ADMIN_PASSWORD ? { email: e.ADMIN_EMAIL, password: e.ADMIN_PASSWORD } : undefined,
    accountCacheMs: e.ACCOUNT_CACHE_MS,
    recordCacheMs: e.RECORD_CACHE_MS,
    assistantName: e.ASSISTANT_NAME,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ?? (e.NODE_ENV === 'development' ? 'pretty' : 'json'),
    models: {
      baseUrl: e.MODEL_BASE_URL,
      apiKey: e.MODEL_API_KEY,
      chatModel: e.CHAT_MODEL,
      embeddingModel: e.EMBEDDING_MODEL,
      offlineEmbeddingModel: e.OFFLINE_EMBEDDING_MODEL,
      visionModel: e.VISION_MODEL,
      embeddingDimensions: e.EMBEDDING_DIMENSIONS,
      timeoutMs: e.MODEL_TIMEOUT_MS,
      maxRetries: e.MODEL_MAX_RETRIES,
      concurrency: e.MODEL_CONCURRENCY,
      retryBaseMs: e.MODEL_RETRY_BASE_MS,
    },
    memory: {
      chunkSize: e.MEMORY_CHUNK_SIZE,
      chunkOverlap: e.MEMORY_CHUNK_OVERLAP,
      embedBatch: e.MEMORY_EMBED_BATCH,
      sketchCacheBytes: e.MEMORY_SKETCH_CACHE_MB * 1024 * 1024,
      reconcile: e.MEMORY_RECONCILE ?? (e.MODEL_BASE_URL ? 'model' : 'rules'),
    },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    oauth: { providers, blockedCountries: e.BLOCKED_COUNTRIES, countryHeader: e.COUNTRY_HEADER },
    accountEmail: {
      verifyTtl: e.EMAIL_VERIFICATION_TTL,
      resetTtl: e.PASSWORD_RESET_TTL,
      mailsPerHour: e.ACCOUNT_MAIL_PER_HOUR,
    },
    oauthFlow: { stateTtl: e.OAUTH_STATE_TTL, providerTimeout: e.OAUTH_TIMEOUT },
    chatPlatform: { botToken: e.CHAT_PLATFORM_BOT_TOKEN },
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      retryDelaySeconds: e.WEBHOOK_RETRY_DELAY,
      secretKey: webhookKey,
      deliveryRetentionDays: e.WEBHOOK_DELIVERY_RETENTION_DAYS,
    },
    tracker:
      e.ISSUE_TRACKER_TOKEN && e.ISSUE_TRACKER_REPO
        ? {
            token: e.ISSUE_TRACKER_TOKEN,
            repo: e.ISSUE_TRACKER_REPO,
            apiUrl: e.ISSUE_TRACKER_API_URL.replace(/\/$/, ''),
            maxAttempts: e.ISSUE_TRACKER_MAX_ATTEMPTS,
            retryDelaySeconds: e.ISSUE_TRACKER_RETRY_DELAY,
          }
        : undefined,
    audit: { mode: e.AUDIT_LOG, retentionDays: e.AUDIT_LOG_RETENTION_DAYS },
    toolApproval:
      e.TOOL_APPROVAL_URL && e.TOOL_APPROVAL_SECRET
        ? { url: e.TOOL_APPROVAL_URL, secret: e.TOOL_APPROVAL_SECRET, timeoutMs: e.TOOL_APPROVAL_TIMEOUT_MS }
        : undefined,
    metricsToken: e.METRICS_TOKEN,
    scheduler: { intervalSeconds: e.SCHEDULER_INTERVAL },
    allowLoopbackTargetsForTests: e.SSRF_ALLOW_LOOPBACK_FOR_TESTS,
    training: {
      fileBytes: e.TRAINING_FILE_LIMIT ?? e.UPLOAD_LIMIT,
      maxPages: e.TRAINING_MAX_PAGES,
      maxChars: e.TRAINING_MAX_CHARS,
      imageBytes: e.TRAINING_IMAGE_LIMIT,
    },
    redisUrl: e.REDIS_URL,
    trustProxy: e.TRUST_PROXY,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    tracing: {
      url:
        e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
        (e.OTEL_EXPORTER_OTLP_ENDPOINT
          ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`
          : undefined),
      serviceName: e.OTEL_SERVICE_NAME,
    },
    services: e.SERVICES,
    limits: {
      bodyBytes: e.BODY_LIMIT,
      uploadBytes: e.UPLOAD_LIMIT,
      uploadFiles: e.UPLOAD_MAX_FILES,
      uploadsPerMinute: e.UPLOAD_RATE_LIMIT,
      uploadQuotaBytes: e.UPLOAD_QUOTA_BYTES,
      uploadRetentionDays: e.UPLOAD_RETENTION_DAYS,
      attachmentBytes: e.ATTACHMENT_MAX_BYTES,
      attachmentTimeoutMs: e.ATTACHMENT_TIMEOUT_MS,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      socketsPerUser: e.SOCKETS_PER_USER,
      socketAuthTimeoutMs: e.SOCKET_AUTH_TIMEOUT_MS,
      authPerMinute: e.AUTH_RATE_LIMIT,
      playersPerMinute: e.PLAYERS_RATE_LIMIT,
      loginFailures: e.LOGIN_FAILURE_LIMIT,
      loginFailureWindowSec: e.LOGIN_FAILURE_WINDOW,
      chatPerMinute: e.CHAT_RATE_LIMIT,
      chatToolCallsPerTurn: e.CHAT_TOOL_CALLS_PER_TURN,
      chatHistoryMessages: e.CHAT_HISTORY_MESSAGES,
      chatContextTokens: e.CHAT_CONTEXT_TOKENS,
      memoryContentBytes: e.MEMORY_MAX_CONTENT,
    },
  };
}
