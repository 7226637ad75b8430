// Composition root: the platform first (src/startup/platform.ts: database, migrations, Redis,
// counters, tokens, bus, job queue, change feed), then each module's services in dependency
// order, each built by its module's factory or constructor from what it needs; then the
// first-start seeding (src/startup/seed.ts), the workers (src/startup/workers.ts) and the health
// probe. Nothing else constructs services; tests build the same graph.
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import type { DatabaseHandle, Db } from './platform/db/database.js';
import type { EmbeddedServer } from './platform/db/pglite-server.js';
import type { EventBus } from './platform/events/bus.js';
import type { CounterStore } from './platform/http/rate-limit.js';
import { createMetrics, type Metrics } from './platform/http/metrics.js';
import type { JobQueue } from './platform/jobs/queue.js';
import type { AccessTokens } from './platform/security/jwt.js';
import { deleteExpiredIdempotencyKeys } from './platform/http/idempotency.js';
import { HealthMonitor } from './platform/db/health-monitor.js';
import { NodeLiveness } from './platform/db/liveness.js';
import type { AccountStates } from './platform/security/account-state.js';
import { createModelGateway, type ModelGateway } from './platform/models/gateway.js';
import { createIdentityModule } from './modules/auth/index.js';
import { ProtocolsService } from './modules/protocols/index.js';
import { ChatPlatformService, createChatPlatformModule } from './modules/chat-platform/index.js';
import { createFilesModule } from './modules/files/index.js';
import { runSweeps, systemStats, type Sweepers } from './modules/admin/index.js';
import { createSchedulerModule } from './modules/scheduler/index.js';
import { InstancesService, TimelineService } from './modules/timeline/index.js';
import { createObserverModule } from './modules/observer/index.js';
import { createCharactersService } from './modules/characters/index.js';
import { InventoryService } from './modules/inventory/index.js';
import { SyncService } from './modules/sync/index.js';
import { AccountService } from './modules/account/index.js';
import { createMemoryModule } from './modules/memory/index.js';
import { ConversationsService, createChatModule, systemKnowledge } from './modules/chat/index.js';
import { createAuditLog } from './modules/audit/index.js';
import { ConsciousnessService } from './modules/consciousness/index.js';
import { PersonaService } from './modules/persona/index.js';
import { createWebhooksModule } from './modules/webhooks/index.js';
import { accountActor, createWorkflowExecution, createWorkflowsModule } from './modules/workflows/index.js';
import { createTrainingModule, Extractor } from './modules/training/index.js';
import { createSuggestionsModule } from './modules/suggestions/index.js';
import type { Drain } from './platform/drain.js';
import { startTracing, stopTracing } from './platform/tracing.js';
import { VERSION } from './version.js';
import { openPlatform, type Platform } from './startup/platform.js';
import { seedFirstStart } from './startup/seed.js';
import { closeAll, startWorkers, type Closers } from './startup/workers.js';
import { defineWrites } from './startup/writes.js';

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
  /** The node's drain (SIGTERM): the requests and chat turns running, none new once it drains. */
  drain: Drain;
  /** What /api/admin/health reports about the model provider. */
  modelStatus(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface CreateDepsOptions {
  log?: Logger;
  /** PGlite: start from this data-directory tarball (the test template). */
  loadFrom?: string;
  /** PGlite: use this running embedded server (the test harness reuses its servers). */
  embedded?: EmbeddedServer;
  /** PGlite: the server main.ts started for this configuration before loading the modules; the
   * database takes it over (and stops it when it closes). */
  starting?: Promise<EmbeddedServer>;
  /** Skip the job queue entirely, and the chat-platform bot (CLI commands that need neither). */
  jobs?: boolean;
  /** The suggestions' clock (timestamps, ttl, the undo window); tests move it by hand. */
  clock?: () => Date;
}

/** The services app.ts mounts and tests call, picked from everything built (which holds internal
 * parts too: job runners, the JWT secret, the change feed). */
function servicesOf(s: Parts & Conversation & Runners) {
  return {
    audit: s.audit,
    scheduler: s.scheduler,
    consciousness: s.consciousness,
    users: s.users,
    auth: s.auth,
    accountEmail: s.accountEmail,
    oauth: s.oauth,
    players: s.players,
    account: s.account,
    conversations: s.conversations,
    timeline: s.timeline,
    instances: s.instances,
    unifiedTimeline: s.unifiedTimeline,
    observer: s.observer,
    observerReflections: s.observerReflections,
    characters: s.characters,
    inventory: s.inventory,
    sync: s.sync,
    protocols: s.protocols,
    chatPlatform: s.chatPlatform,
    chatPlatformCommands: s.chatPlatformCommands,
    chatPlatformChat: s.chatPlatformChat,
    files: s.files,
    memory: s.memory,
    chat: s.chat,
    persona: s.persona,
    webhooks: s.webhooks,
    workflows: s.workflows,
    workflowTasks: s.workflowTasks,
    workflowRuns: s.workflowRuns,
    training: s.training,
    suggestions: s.suggestions,
  };
}

export type Services = ReturnType<typeof servicesOf>;

export async function createDeps(config: Config, opts: CreateDepsOptions = {}): Promise<Deps> {
  const { deps, start } = await buildDeps(config, opts);
  await start();
  return deps;
}

/** createDeps in two steps (main.ts builds the routes between them): every part built on the
 * database, opened and migrated; then `start` seeds the first start and starts the workers and
 * the health probe. The routes need the services, not their rows: built while `start` runs, this
 * thread's work overlaps the database's. A failed step closes what was opened. */
export async function buildDeps(
  config: Config,
  opts: CreateDepsOptions = {},
): Promise<{ deps: Deps; start: () => Promise<void> }> {
  const log = opts.log ?? pino({ level: config.logLevel });
  const closers: Closers = [];
  try {
    // Before anything traced runs; stopped last (its closer is the first, run last).
    if (await startTracing({ ...config.tracing, version: VERSION })) closers.push(stopTracing);
    const platform = await openPlatform(config, log, pick(opts, 'loadFrom', 'embedded', 'starting'), closers);
    const onClose = (close: () => Promise<unknown>) => void closers.unshift(close);
    const identity = await createIdentityModule(
      { ...pick(platform, 'db', 'jobs', 'log', 'tokens', 'counters', 'changes'), onClose },
      config,
    );
    const registry = buildRegistry(config, { ...platform, ...identity }, closers);
    const knowledge = await buildKnowledge(config, { ...platform, ...identity, ...registry }, closers);
    const parts = { ...platform, ...identity, ...registry, ...knowledge };
    const conversation = buildConversation(config, parts, closers);
    const runners = buildRunners(config, opts, { ...parts, ...conversation });
    const services = servicesOf({ ...parts, ...conversation, ...runners });
    const health = new HealthMonitor(platform.database);

    const { models, memory } = knowledge;
    const deps: Deps = {
      ...pick(platform, 'config', 'log', 'database', 'db', 'jobs', 'bus', 'counters', 'tokens', 'redis'),
      drain: platform.drain,
      ...pick(knowledge, 'metrics', 'liveness', 'models'),
      accounts: identity.accounts,
      health,
      services,
      modelStatus: async () => ({
        ...(await models.status()),
        memoryEmbeddings: await memory.embeddingStatus(),
      }),
      close: () => closeAll(closers, log),
    };
    const start = async () => {
      try {
        // The health probe first (two statements), not behind the workers' first fetches.
        await health.start();
        closers.unshift(async () => health.stop());
        await seedFirstStart({ config, log, ...services });
        await startWorkers(
          { config, log, jobs: platform.jobs, ...services, ...runners },
          opts.jobs !== false,
          closers,
        );
      } catch (err) {
        await closeAll(closers);
        throw err;
      }
    };
    return { deps, start };
  } catch (err) {
    await closeAll(closers);
    throw err;
  }
}

type Identity = Awaited<ReturnType<typeof createIdentityModule>>;

/** The records the rest reads: conversations, the timeline and its registry of instances (with
 * the webhooks that subscribe to its flush), characters, inventory, channels, protocols, files. */
function buildRegistry(config: Config, p: Platform & Identity, closers: Closers) {
  const { db, jobs, log, users, changes } = p;
  const conversations = new ConversationsService(db, users, { changes, cacheMs: config.recordCacheMs });
  const timeline = new TimelineService(db, p.bus, users);
  const instances = new InstancesService(db, timeline);
  const isObserver = async (id: number) => (await timeline.getInstance(id))?.level === 8;
  const webhooks = createWebhooksModule({ db, jobs, log, changes, isObserver }, config, p.jwtSecret);
  closers.unshift(async () => webhooks.close());
  const characters = createCharactersService(p, config.recordCacheMs);
  // A tool's change of a player's inventory reaches the player's sockets (inventoryUpdate).
  const inventory = new InventoryService(db, timeline, users, (c) => p.bus.publish('inventory.changed', c));
  const chatPlatform = new ChatPlatformService(db);
  // Routing reads the channel's protocol and the server's own persona type, never a client's claim.
  const protocols = new ProtocolsService(db, {
    channelProtocol: (channelId) => chatPlatform.channelProtocolId(channelId),
    subjectOf: (userId) => characters.routingSubject(userId),
    changes,
    familyCacheMs: config.recordCacheMs,
  });
  const files = createFilesModule(db, p.counters, config);
  return {
    conversations,
    timeline,
    instances,
    isObserver,
    webhooks,
    characters,
    inventory,
    chatPlatform,
    protocols,
    files,
  };
}

type Registry = ReturnType<typeof buildRegistry>;

/** The model gateway, this node's liveness, memory, sync, metrics, the audit log and persona
 * sessions. */
async function buildKnowledge(config: Config, p: Platform & Identity & Registry, closers: Closers) {
  const { db, log, database, users, timeline, characters } = p;
  const models = createModelGateway(config, db, log);
  closers.unshift(() => models.flush());
  // Claims that must not outlive their process (the embedding queue's) name this one.
  const liveness = new NodeLiveness(database, log);
  await liveness.start();
  closers.unshift(() => liveness.stop());
  const memory = createMemoryModule(
    {
      ...pick(p, 'db', 'jobs', 'log'),
      models,
      claimHolder: liveness.id,
      vector: database.capabilities.vector,
      assistantUserId: () => characters.assistantUserId(),
      identity: (id) => users.identity(id),
    },
    config,
  );
  // universal-state reads the player's newest memories through the memory service.
  const sync = new SyncService(
    db,
    timeline,
    characters,
    p.inventory,
    (userId, limit) => memory.newestForUser(userId, limit),
    config.database.poolTimeoutMs,
  );
  const metrics = createMetrics();
  // The audit log: noted after each response, written in batches behind it.
  const audit = createAuditLog(db, log, config);
  closers.unshift(() => audit.close());
  // Persona sessions: who may use an observer is the registry's answer (as for `/observer`);
  // a session's conversation is the chat module's. The chat turn reads a session through it.
  const persona = new PersonaService({
    db,
    authorizeObserver: (user, observerId) => p.instances.authorizeWatcher(user, observerId),
    rootObserverId: () => timeline.rootObserverId(),
    conversations: p.conversations,
  });
  return { models, liveness, memory, sync, metrics, audit, persona };
}

type Parts = Platform & Identity & Registry & Awaited<ReturnType<typeof buildKnowledge>>;

/** Chat, workflows, the observer and subject consciousness. */
function buildConversation(config: Config, p: Parts, closers: Closers) {
  const { db, jobs, log, models, memory, timeline, instances, characters, protocols } = p;
  // Documents attached to chat are read by the training module's extractor, in a pool of their
  // own: a turn never waits behind a training job's long extraction.
  const chatExtractor = new Extractor();
  closers.unshift(() => chatExtractor.close());
  const chat = createChatModule(
    {
      ...pick(p, 'db', 'log', 'counters', 'jobs', 'models', 'memory', 'inventory', 'protocols', 'characters'),
      ...pick(p, 'conversations', 'users', 'files', 'metrics', 'drain'),
      extractor: chatExtractor,
      personas: p.persona,
      knowledge: systemKnowledge({
        stats: (hours) =>
          systemStats(
            { users: p.users, auth: p.auth, memory, chat: p.conversations, timeline, models },
            hours,
          ),
        observers: () => instances.observers(undefined),
        recentEvents: (limit) => timeline.list({ limit }),
      }),
    },
    config,
  );
  const workflows = createWorkflowsModule(
    {
      db,
      jobs,
      log,
      timeline,
      protocols,
      addMemory: (input, uow) => memory.addMemory(input, uow),
      // An NPC (or the assistant) is found; anyone else is refused.
      isCharacter: (id, executor) => characters.getNpc(id, executor).then(Boolean, () => false),
    },
    config,
  );
  const assistantUserId = () => characters.assistantUserId();
  const observerParts = pick(p, 'db', 'bus', 'log', 'timeline', 'instances', 'memory', 'inventory', 'models');
  const observerModule = createObserverModule({
    ...observerParts,
    openCursor: p.database.openCursor,
    assistantUserId,
  });
  // Subject consciousness: onboarding, encoding, diary compliance and the dashboard, over the
  // registry, the timeline, memories, the observer's summary and the workflows' projects.
  const consciousness = new ConsciousnessService({
    db,
    instances,
    timeline,
    unified: observerModule.unifiedTimeline,
    memory,
    observer: observerModule.observer,
    groundFloor: () => protocols.groundFloor(),
    projects: (q) => workflows.projectStats(q),
    assistantUserId,
  });
  // An account's export and erasure read through each owning module's service.
  const account = new AccountService({
    users: p.users,
    memory,
    conversations: p.conversations,
    inventory: p.inventory,
    timeline,
    accessTokenTtlSeconds: config.jwt.accessTtl,
  });
  return { chat, workflows, ...observerModule, consciousness, account };
}

type Conversation = ReturnType<typeof buildConversation>;

type Runners = ReturnType<typeof buildRunners>;

/** What runs in the background or for other parties: scheduled tasks and maintenance sweeps,
 * workflow runs, the chat platform's commands and chat, training and suggestions. */
function buildRunners(config: Config, opts: CreateDepsOptions, p: Parts & Conversation) {
  const { db, jobs, log, counters, workflows, chatPlatform } = p;
  const { scheduler, sweepers } = buildScheduler(config, p);
  const { workflowTasks, workflowRuns, workflowRunJobs } = createWorkflowExecution(
    pick(p, 'db', 'jobs', 'log', 'models', 'workflows', 'protocols', 'characters'),
  );
  const actorOf = accountActor((id) => p.accounts.get(id), config.adminUserIds);
  const workflowParts = { workflows, workflowTasks, workflowRuns, actorOf };
  const chatPlatformModule = createChatPlatformModule(
    { ...workflowParts, chat: p.chat, chatPlatform, counters, log, accountState: (id) => p.accounts.get(id) },
    config,
  );
  const { training, trainingJobs } = createTrainingModule(
    pick(p, 'db', 'jobs', 'models', 'bus', 'log', 'memory', 'characters', 'conversations'),
    config,
  );
  // The creator's suggestion config is the workflows' autoRunOrchestrator port.
  const { suggestions, suggestionJobs } = createSuggestionsModule(
    {
      ...workflowParts,
      db,
      jobs,
      log,
      models: p.models,
      counters,
      lastUserMessage: async (userId, conversationId) => {
        const messages = await p.conversations.history(userId, conversationId, 20);
        return messages.findLast((m) => m.role === 'user')?.text ?? null;
      },
      channelProtocol: (channelId) => chatPlatform.channelProtocolId(channelId),
      clock: opts.clock ?? (() => new Date()),
    },
    config,
  );
  workflows.usePorts({
    runExecutor: workflowRunJobs.executor,
    autoRunOrchestrator: suggestions.configs.autoRunOrchestrator,
  });
  // What a write's unit of work flushes, and who sees each flush in its transaction.
  defineWrites(p.writes, { timeline: p.timeline, webhooks: p.webhooks, suggestionJobs });
  return {
    scheduler,
    sweepers,
    workflowTasks,
    workflowRuns,
    workflowRunJobs,
    ...chatPlatformModule,
    training,
    trainingJobs,
    suggestions,
  };
}

/** Scheduled tasks: each kind runs through its owner's service, as the assistant's own user; the
 * hourly maintenance sweep calls each owner's sweep. */
function buildScheduler(config: Config, p: Parts & Conversation) {
  const sweepers: Sweepers = {
    rateLimitWindows: () => p.counters.sweep(),
    refreshTokens: () => p.auth.sweepExpiredTokens(),
    idempotencyKeys: () => deleteExpiredIdempotencyKeys(p.db, 24),
    memoryTombstones: () => p.memory.sweep(),
    uploads: () => p.files.sweep(),
    webhookDeliveries: () => p.webhooks.sweep(),
    auditLog: () => p.audit.sweep(),
  };
  const scheduler = createSchedulerModule(
    {
      ...pick(p, 'db', 'jobs', 'log', 'isObserver'),
      assistantUserId: () => p.characters.assistantUserId(),
      observerCycle: (actor, observerId, input) => p.observerReflections.cycle(actor, observerId, input),
      diaryCompliance: (observerId, hours) => p.consciousness.checkCompliance(observerId, hours),
      maintenanceSweep: () => runSweeps(sweepers),
    },
    config,
  );
  return { scheduler, sweepers };
}

/** The named properties of a built part: a service is given only what it uses. */
function pick<T, K extends keyof T>(from: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K>;
}
