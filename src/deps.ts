// Composition root: infrastructure first (database, jobs, bus, counters, tokens), then each
// module's service. Nothing else constructs services; tests build the same graph.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle, type Db } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import { EventBus } from './platform/events/bus.js';
import {
  DbCounterStore,
  MemoryCounterStore,
  RedisCounterStore,
  REDIS_OPTIONS,
  type CounterStore,
} from './platform/http/rate-limit.js';
import { createMetrics, type Metrics } from './platform/http/metrics.js';
import { JobQueue } from './platform/jobs/queue.js';
import { AccessTokens } from './platform/security/jwt.js';
import { deleteExpiredIdempotencyKeys } from './platform/http/idempotency.js';
import { HealthMonitor } from './platform/db/health-monitor.js';
import { NodeLiveness } from './platform/db/liveness.js';
import { createChangeFeed, PgChangeFeed } from './platform/db/notifications.js';
import { AccountStates, type AccountState } from './platform/security/account-state.js';
import { isAdmin } from './platform/security/identity.rules.js';
import type { UserPrincipal } from './platform/http/auth.js';
import { createMailer } from './platform/mail/mailer.js';
import { AccountEmailService, AuthService, enqueueVerification, OAuthService } from './modules/auth/index.js';
import { UsersService } from './modules/users/index.js';
import { ProtocolsService } from './modules/protocols/index.js';
import {
  ChatPlatformChat,
  ChatPlatformCommands,
  ChatPlatformService,
  createChatPlatformBot,
} from './modules/chat-platform/index.js';
import { FilesService } from './modules/files/index.js';
import {
  defineMaintenanceJobs,
  runSweeps,
  scheduleMaintenance,
  systemStats,
  type Sweepers,
} from './modules/admin/index.js';
import { SchedulerService } from './modules/scheduler/index.js';
import { InstancesService, TimelineService, UnifiedTimeline } from './modules/timeline/index.js';
import { ObserverReflections, ObserverService } from './modules/observer/index.js';
import { CharactersService } from './modules/characters/index.js';
import { InventoryService } from './modules/inventory/index.js';
import { SyncService } from './modules/sync/index.js';
import { MemoryService } from './modules/memory/index.js';
import { ChatService, ConversationsService, defineChatJobs, systemKnowledge } from './modules/chat/index.js';
import { AuditLog } from './modules/audit/index.js';
import { ConsciousnessService } from './modules/consciousness/index.js';
import { PersonaService } from './modules/persona/index.js';
import { deriveSecretKey, WebhooksService } from './modules/webhooks/index.js';
import {
  specialtiesOf,
  WorkflowIssues,
  WorkflowOrchestrator,
  WorkflowRunJobs,
  WorkflowRunsService,
  WorkflowsService,
  WorkflowTasksService,
} from './modules/workflows/index.js';
import { Extractor, OcrEngine, TrainingJobs, TrainingService } from './modules/training/index.js';
import { SuggestionJobs, SuggestionsService } from './modules/suggestions/index.js';
import { createModelProvider, ModelGateway } from './platform/models/gateway.js';

export interface Services {
  audit: AuditLog;
  scheduler: SchedulerService;
  consciousness: ConsciousnessService;
  users: UsersService;
  auth: AuthService;
  protocols: ProtocolsService;
  chatPlatform: ChatPlatformService;
  chatPlatformCommands: ChatPlatformCommands;
  chatPlatformChat: ChatPlatformChat;
  files: FilesService;
  conversations: ConversationsService;
  accountEmail: AccountEmailService;
  oauth: OAuthService;
  timeline: TimelineService;
  instances: InstancesService;
  unifiedTimeline: UnifiedTimeline;
  observer: ObserverService;
  observerReflections: ObserverReflections;
  characters: CharactersService;
  inventory: InventoryService;
  sync: SyncService;
  memory: MemoryService;
  chat: ChatService;
  persona: PersonaService;
  webhooks: WebhooksService;
  workflows: WorkflowsService;
  workflowTasks: WorkflowTasksService;
  workflowRuns: WorkflowRunsService;
  training: TrainingService;
  suggestions: SuggestionsService;
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
  /** Each account's current rights and ended sessions, cached per node for seconds. */
  accounts: AccountStates;
  metrics: Metrics;
  health: HealthMonitor;
  /** This process's id and liveness row (claims that must not outlive it name it). */
  liveness: NodeLiveness;
  redis: Redis | undefined;
  services: Services;
  /** The one door to chat, embedding and vision models (timeouts, retries, limits, call records). */
  models: ModelGateway;
  /** What /api/admin/health reports about the model provider. */
  modelStatus(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface CreateDepsOptions {
  log?: Logger;
  /** PGlite: start from this data-directory tarball (the test template). */
  loadFrom?: string;
  /** Skip the job queue entirely, and the chat-platform bot (CLI commands that need neither). */
  jobs?: boolean;
  /** The suggestions' clock (timestamps, ttl, the undo window); tests move it by hand. */
  clock?: () => Date;
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

/** Who a scheduled task acts as: the assistant's own user, with admin rights (an observer cycle's
 * events name it). */
async function schedulerPrincipal(characters: CharactersService, name: string): Promise<UserPrincipal> {
  return {
    kind: 'user',
    id: await characters.assistantUserId(),
    role: 'silicon',
    accountType: 'npc',
    name,
    admin: true,
    jti: 'scheduled-task',
    exp: Number.MAX_SAFE_INTEGER,
    sid: undefined,
    clientType: undefined,
  };
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
    const { applied } = await migrate(database, { pgvector: config.database.pgvector });
    if (applied.length) log.info({ applied }, 'migrations applied');
    const db = database.db;

    const redis = config.redisUrl ? new Redis(config.redisUrl, REDIS_OPTIONS) : undefined;
    if (redis) cleanup.unshift(() => redis.quit());
    const counters: CounterStore = redis
      ? new RedisCounterStore(redis, log)
      : database.kind === 'pglite'
        ? new MemoryCounterStore()
        : new DbCounterStore(db);
    const jwtSecret = resolveJwtSecret(config);
    const tokens = new AccessTokens({
      secret: jwtSecret,
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      ttlSeconds: config.jwt.accessTtl,
    });
    const bus = new EventBus(log);
    const jobs = new JobQueue(database, log);

    const changes = createChangeFeed(database, config.database.url, log);
    cleanup.unshift(() => changes.close());
    // A request's rights come from the account as it is now: its row (the users module's) and its
    // ended sessions (the auth module's), read together when not cached.
    const accounts: AccountStates = new AccountStates(
      async (id): Promise<AccountState | undefined> => {
        const [row, endedSessions] = await Promise.all([users.access(id), auth.endedSessions(id)]);
        return row && { role: row.role, accountType: row.account_type, name: row.name, endedSessions };
      },
      changes,
      { ttlMs: config.accountCacheMs },
    );
    cleanup.unshift(async () => accounts.close());
    const accountChanged = (executor: Db, id: number): Promise<void> => accounts.changed(executor, id);
    const users = new UsersService(db, { accountChanged, cachedAccess: (id) => accounts.get(id) });
    const auth = new AuthService(db, users, tokens, counters, {
      refreshTtlSeconds: config.jwt.refreshTtl,
      loginFailureLimit: config.limits.loginFailures,
      loginFailureWindowSec: config.limits.loginFailureWindowSec,
      // Registration queues the verification mail (the account-mail module's job) before it answers.
      onRegistered: (user) => enqueueVerification(jobs, db, log, user),
      accountChanged,
      apiKeyCacheMs: config.accountCacheMs,
      changes,
    });
    // Listening before the first request, so no change said from then on is missed.
    if (changes instanceof PgChangeFeed) await changes.ready();
    const mailer = createMailer(config.mail, db, log);
    cleanup.unshift(() => mailer.close());
    const accountEmail = new AccountEmailService(db, users, auth, jobs, mailer, counters, log, {
      appUrl: config.appUrl,
      verifyTtlSeconds: config.accountEmail.verifyTtl,
      resetTtlSeconds: config.accountEmail.resetTtl,
      mailsPerHour: config.accountEmail.mailsPerHour,
    });
    const oauth = new OAuthService(db, users, auth, log, {
      providers: config.oauth.providers,
      publicUrl: config.publicUrl,
      appUrl: config.appUrl,
      blockedCountries: config.oauth.blockedCountries,
      stateTtlSeconds: config.oauthFlow.stateTtl,
      loginCodeTtlSeconds: 60, // the API contract: the app trades the code once, within 60 s
      providerTimeoutSeconds: config.oauthFlow.providerTimeout,
    });
    if (config.oauth.blockedCountries.length > 0 && !config.oauth.countryHeader)
      log.warn('BLOCKED_COUNTRIES has no effect without COUNTRY_HEADER (the header a trusted proxy sets)');
    const conversations = new ConversationsService(db, users);
    const timeline = new TimelineService(db, bus, users);
    const instances = new InstancesService(db, timeline);
    // Webhooks join every timeline event's transaction (a record hook) and deliver from their job.
    const webhooks = new WebhooksService(
      {
        db,
        jobs,
        log,
        changes,
        timeline,
        isObserver: async (id) => (await timeline.getInstance(id))?.level === 8,
      },
      {
        secretKey: config.webhooks.secretKey ?? deriveSecretKey(jwtSecret),
        timeoutMs: config.webhooks.timeoutMs,
        maxAttempts: config.webhooks.maxAttempts,
        retryDelaySeconds: config.webhooks.retryDelaySeconds,
        deliveryRetentionDays: config.webhooks.deliveryRetentionDays,
        endpointsCacheMs: 30_000,
        allowLoopbackForTests: config.allowLoopbackTargetsForTests,
      },
    );
    cleanup.unshift(async () => webhooks.close());
    const characters = new CharactersService(db, users);
    const inventory = new InventoryService(db, timeline, users);
    const chatPlatform = new ChatPlatformService(db);
    // Routing reads the channel's protocol; the persona type is the server's own (the character
    // profile, or the persona session a chat turn runs in), never a client's claim.
    const protocols = new ProtocolsService(db, {
      channelProtocol: (channelId) => chatPlatform.channelProtocolId(channelId),
      subjectOf: (userId) => characters.routingSubject(userId),
    });
    const files = new FilesService(db, counters, {
      fileBytes: config.limits.uploadBytes,
      files: config.limits.uploadFiles,
      perMinute: config.limits.uploadsPerMinute,
      quotaBytes: config.limits.uploadQuotaBytes,
      retentionDays: config.limits.uploadRetentionDays,
    });
    const models = new ModelGateway(createModelProvider(config), db, log, {
      timeoutMs: config.models.timeoutMs,
      maxRetries: config.models.maxRetries,
      concurrency: config.models.concurrency,
      retryBaseMs: config.models.retryBaseMs,
    });
    cleanup.unshift(() => models.flush());
    // Claims that must not outlive their process (the embedding queue's) name this one.
    const liveness = new NodeLiveness(database, log);
    await liveness.start();
    cleanup.unshift(() => liveness.stop());
    const memory = new MemoryService(
      db,
      jobs,
      models,
      log,
      {
        claimHolder: liveness.id,
        vector: database.capabilities.vector,
        maxContentBytes: config.limits.memoryContentBytes,
        chunkSize: config.memory.chunkSize,
        chunkOverlap: config.memory.chunkOverlap,
        embedBatch: config.memory.embedBatch,
        sketchIndexBytes: config.memory.sketchCacheBytes,
      },
      {
        // World memories belong to the assistant's own user, which the characters module creates.
        assistantUserId: () => characters.assistantUserId(),
        identity: (id) => users.identity(id),
      },
    );
    // universal-state reads the player's newest memories through the memory service.
    const sync = new SyncService(
      db,
      timeline,
      characters,
      inventory,
      (userId, limit) => memory.newestForUser(userId, limit),
      config.database.poolTimeoutMs,
    );
    const metrics = createMetrics();
    // The audit log: noted after each response, written in batches behind it.
    const audit = new AuditLog(db, log, {
      mode: config.audit.mode,
      retentionDays: config.audit.retentionDays,
      flushMs: 500,
      batchSize: 1000,
    });
    cleanup.unshift(() => audit.close());
    // Persona sessions: who may use an observer is the registry's answer (as for `/observer`);
    // a session's conversation is the chat module's. The chat turn reads a session through it.
    const persona = new PersonaService({
      db,
      authorizeObserver: (user, observerId) => instances.authorizeWatcher(user, observerId),
      rootObserverId: () => timeline.rootObserverId(),
      conversations,
    });
    // Documents attached to chat are read by the training module's extractor, in a pool of their
    // own: a turn never waits behind a training job's long extraction.
    const chatExtractor = new Extractor();
    cleanup.unshift(() => chatExtractor.close());
    const chat = new ChatService(
      {
        db,
        log,
        counters,
        jobs,
        models,
        memory,
        inventory,
        protocols,
        characters,
        conversations,
        users,
        files,
        extractor: chatExtractor,
        personas: persona,
        knowledge: systemKnowledge({
          stats: (hours) =>
            systemStats({ users, auth, memory, chat: conversations, timeline, models }, hours),
          observers: () => instances.observers(undefined),
          recentEvents: (limit) => timeline.list({ limit }),
        }),
        metrics,
        assistantName: config.assistantName,
      },
      {
        messagesPerMinute: config.limits.chatPerMinute,
        toolCallsPerTurn: config.limits.chatToolCallsPerTurn,
        historyMessages: config.limits.chatHistoryMessages,
        attachmentTimeoutMs: config.limits.attachmentTimeoutMs,
        contextTokens: config.limits.chatContextTokens,
      },
    );
    defineChatJobs(jobs, {
      models,
      memory,
      files,
      log,
      attachmentBytes: config.limits.attachmentBytes,
      attachmentTimeoutMs: config.limits.attachmentTimeoutMs,
    });
    // Workflows: definitions and instances, and the issue tracker collectArtifacts files in (when
    // configured); their runs, suggestion settings and chat-platform notifications are ports
    // (WorkflowPorts) wired where those parts are built.
    const workflows = new WorkflowsService({
      db,
      timeline,
      protocols,
      addMemory: (input, trx) => memory.addMemory(input, trx),
      // An NPC (or the assistant) is found; anyone else is refused.
      isCharacter: (id, executor) => characters.getNpc(id, executor).then(Boolean, () => false),
      issues: config.tracker && new WorkflowIssues({ db, jobs, log }, config.tracker, config),
    });
    // The observer: its unified timeline (the timeline module's reads, exports through a database
    // cursor), summary and 5D navigation, reflections and the cycle.
    const unifiedTimeline = new UnifiedTimeline(db, database.openCursor, timeline, { exportBatch: 500 });
    const observer = new ObserverService({ db, bus, unified: unifiedTimeline, instances, memory, inventory });
    const observerReflections = new ObserverReflections({
      db,
      bus,
      log,
      observer,
      timeline,
      unified: unifiedTimeline,
      memory,
      models,
      assistantUserId: () => characters.assistantUserId(),
    });
    // Subject consciousness: onboarding, encoding, diary compliance and the dashboard, over the
    // registry, the timeline, memories, the observer's summary and the workflows' projects.
    const consciousness = new ConsciousnessService({
      db,
      instances,
      timeline,
      unified: unifiedTimeline,
      memory,
      observer,
      groundFloor: () => protocols.groundFloor(),
      projects: (p) => workflows.projectStats(p),
      assistantUserId: () => characters.assistantUserId(),
    });
    // Scheduled tasks: each kind runs through its owner's service, as the assistant's own user.
    const sweepers: Sweepers = {
      rateLimitWindows: () => counters.sweep(),
      refreshTokens: () => auth.sweepExpiredTokens(),
      idempotencyKeys: () => deleteExpiredIdempotencyKeys(db, 24),
      memoryTombstones: () => memory.sweep(),
      uploads: () => files.sweep(),
      webhookDeliveries: () => webhooks.sweep(),
      auditLog: () => audit.sweep(),
    };
    const scheduler = new SchedulerService({
      db,
      jobs,
      log,
      isObserver: async (id) => (await timeline.getInstance(id))?.level === 8,
      runners: {
        observer_cycle: async ({ observerId, hours, limit }) =>
          observerReflections.cycle(await schedulerPrincipal(characters, config.assistantName), observerId, {
            hours: hours ?? 24,
            limit: limit ?? 100,
          }),
        diary_compliance: ({ observerId, hours }) => consciousness.checkCompliance(observerId, hours ?? 24),
        maintenance_sweep: () => runSweeps(sweepers),
      },
    });
    const workflowTasks = new WorkflowTasksService(workflows);
    const workflowRuns = new WorkflowRunsService(workflows);
    // The orchestrator executes runs in the `workflows.run` job; the service hands it each
    // committed run (entering execution, a rerun, POST .../orchestrate).
    const orchestrator = new WorkflowOrchestrator(
      {
        db,
        core: workflows,
        tasks: workflowTasks,
        models,
        routeUser: async (userId, channelId) => (await protocols.routeUser(userId, { channelId })).resolved,
        resolveProtocol: (id) => protocols.resolve(id),
        specialists: async () =>
          (await characters.allNpcs())
            .filter((n) => !n.isAssistant)
            .map((n) => ({
              id: n.id,
              specialties: specialtiesOf(n.metadata),
              name: n.name,
              description: n.description,
            })),
        persona: async (id) => {
          const npc = await characters.getNpc(id);
          return { name: npc.name, description: npc.description };
        },
        assistantUserId: () => characters.assistantUserId(),
        log,
      },
      { leaseSeconds: 60 },
    );
    const workflowRunJobs = new WorkflowRunJobs(jobs, db, orchestrator, log, {
      // Runs mostly wait on model calls: many at once per node.
      runsPerNode: 32,
      orphanAfterSeconds: 30,
      sweepEverySeconds: 30,
    });
    // Chat-platform commands run the workflow operations as the caller, or as the account a
    // platform user is linked to (its rights as they are now).
    // A workflow actor by account id (its name and admin rights as they are now), for the parts
    // that act for a user outside a request: chat-platform commands and suggestion passes.
    const workflowActorOf = async (id: number) => {
      const state = await accounts.get(id);
      return (
        state && {
          id,
          name: state.name,
          admin: isAdmin({ id, role: state.role, accountType: state.accountType }, config.adminUserIds),
        }
      );
    };
    const chatPlatformCommands = new ChatPlatformCommands({
      chatPlatform,
      workflows,
      workflowTasks,
      workflowRuns,
      actorOf: workflowActorOf,
    });
    const chatPlatformChat = new ChatPlatformChat({
      chat,
      chatPlatform,
      counters,
      log,
      accountState: (id) => accounts.get(id),
      adminUserIds: config.adminUserIds,
    });
    // NPC training: documents are read in worker threads, screenshots by tesseract.js (its own
    // thread, the shipped language data unpacked once into a cache under the system's temporary
    // directory); the job stores the memories through the memory module.
    const extractor = new Extractor();
    const trainingLimits = {
      fileBytes: config.training.fileBytes,
      maxPages: config.training.maxPages,
      maxChars: config.training.maxChars,
      imageBytes: config.training.imageBytes,
      memoryBytes: config.limits.memoryContentBytes,
    };
    const trainingDeps = { db, jobs, models, bus, log, memory, characters, conversations, extractor };
    const training = new TrainingService(trainingDeps, trainingLimits);
    const trainingJobs = new TrainingJobs(
      trainingDeps,
      training,
      new OcrEngine({ cacheDir: join(tmpdir(), 'assistant-platform-ocr'), idleMs: 60_000 }),
      trainingLimits,
    );
    // Suggestions: passes over the workflows (on GET, and a job enqueued with each instance write)
    // whose operations run through the workflow services; the creator's config is the workflows'
    // autoRunOrchestrator port.
    const suggestions = new SuggestionsService(
      {
        db,
        log,
        models,
        counters,
        workflows,
        workflowTasks,
        workflowRuns,
        lastUserMessage: async (userId, conversationId) => {
          const messages = await conversations.history(userId, conversationId, 20);
          return messages.findLast((m) => m.role === 'user')?.text ?? null;
        },
        channelProtocol: (channelId) => chatPlatform.channelProtocolId(channelId),
        actorOf: workflowActorOf,
        clock: opts.clock ?? (() => new Date()),
      },
      // The contract's ttl; a user causes at most as many intent calls as chat turns a minute.
      { ttlSeconds: 3600, intentCallsPerMinute: config.limits.chatPerMinute },
    );
    const suggestionJobs = new SuggestionJobs(jobs, suggestions);
    workflows.usePorts({
      runExecutor: workflowRunJobs.executor,
      autoRunOrchestrator: suggestions.configs.autoRunOrchestrator,
      instanceWritten: suggestionJobs.instanceWritten,
    });
    const services: Services = {
      audit,
      scheduler,
      consciousness,
      users,
      auth,
      accountEmail,
      oauth,
      conversations,
      timeline,
      instances,
      unifiedTimeline,
      observer,
      observerReflections,
      characters,
      inventory,
      sync,
      protocols,
      chatPlatform,
      chatPlatformCommands,
      chatPlatformChat,
      files,
      memory,
      chat,
      persona,
      webhooks,
      workflows,
      workflowTasks,
      workflowRuns,
      training,
      suggestions,
    };

    // First start: the assistant's own user and the root observer (the API contract). Both steps
    // are idempotent and safe when several nodes start together.
    await characters.ensureAssistant(config.assistantName);
    // ADMIN_EMAIL/ADMIN_PASSWORD: the first administrator, before the root observer takes its owner.
    if (config.firstAdmin) {
      const outcome = await users.ensureFirstAdmin(config.firstAdmin);
      if (outcome === 'created') log.info({ email: config.firstAdmin.email }, 'first administrator created');
      if (outcome === 'email_taken')
        log.warn(
          { email: config.firstAdmin.email },
          'ADMIN_EMAIL belongs to an existing account that is not an administrator: no administrator was made (promote it with the CLI: users set-role)',
        );
    }
    await timeline.ensureRootObserver();
    // The builtin protocols (spec "Protocol ids"); inserts only the missing ones.
    await protocols.seed();
    // The workflow protocols and definitions (after the protocols they reference).
    await workflows.seed();

    defineMaintenanceJobs(jobs, sweepers);

    if (opts.jobs !== false) {
      const worker = config.services.includes('worker');
      await jobs.start({
        work: worker,
        schedule: worker,
        scheduleIntervalSeconds: config.scheduler.intervalSeconds,
      });
      cleanup.unshift(() => jobs.stop());
      await memory.start();
      if (worker) await scheduleMaintenance(jobs);
      if (worker) await scheduler.reconcile();
      // Before the queue stops: this node's runs release their leases and their jobs are retried.
      cleanup.unshift(() => workflowRunJobs.stop());
      if (config.services.includes('worker')) await workflowRunJobs.start();
      // The chat-platform bot, only with CHAT_PLATFORM_BOT_TOKEN: it posts workflow notifications
      // from every node, and receives slash commands on worker nodes. It connects in the
      // background: the platform being unreachable never stops the service from starting.
      const bot = await createChatPlatformBot({
        token: config.chatPlatform.botToken,
        gateway: config.services.includes('worker'),
        commands: chatPlatformCommands,
        chat: chatPlatformChat,
        log,
      });
      if (bot) {
        workflows.usePorts({ notify: (n) => bot.notify(n) });
        cleanup.unshift(() => bot.stop());
        bot.start().catch((err: unknown) => log.error({ err }, 'the chat-platform bot did not start'));
      }
    }

    // Before the queue stops (cleanup runs last-registered first): this node's training jobs are
    // aborted and retried elsewhere or after the restart; their worker threads end.
    cleanup.unshift(() => trainingJobs.stop());

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
      accounts,
      metrics,
      health,
      liveness,
      redis,
      services,
      models,
      modelStatus: async () => ({
        ...(await models.status()),
        memoryEmbeddings: await memory.embeddingStatus(),
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
