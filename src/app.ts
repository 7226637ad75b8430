// buildApp(deps): the HTTP server and Socket.IO, without listening (tests call it directly). Each
// module is a Fastify plugin given only the services its routes call; its socket handlers likewise.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Namespace, Server as SocketServer } from 'socket.io';
import type { Deps } from './deps.js';
import { registerAuth } from './platform/http/auth.js';
import { registerCors } from './platform/http/cors.js';
import { registerDocs } from './platform/http/docs.js';
import { registerLingeringClose } from './platform/http/linger.js';
import { registerJsonBodies } from './platform/http/json-body.js';
import { registerMetrics } from './platform/http/metrics.js';
import {
  AppError,
  clientErrorHandler,
  trackResponses,
  frameworkErrorHandler,
  registerProblemHandlers,
  rejectUnsafeText,
} from './platform/http/problem.js';
import { rateLimitStore } from './platform/http/rate-limit.js';
import type { App } from './platform/http/types.js';
import { withEmits } from './platform/realtime/asyncapi.js';
import { registerWeb } from './platform/http/web.js';
import { registerDrain } from './platform/drain.js';
import { registerRequestSpans } from './platform/tracing.js';
import { authenticateSocket, createSocketServer } from './platform/realtime/socket-server.js';
import { attachRealtimeAdapter } from './platform/realtime/adapter.js';
import { accountPlugin } from './modules/account/index.js';
import { adminPlugin } from './modules/admin/index.js';
import { auditPlugin, registerAuditLog } from './modules/audit/index.js';
import { consciousnessPlugin } from './modules/consciousness/index.js';
import { schedulerPlugin } from './modules/scheduler/index.js';
import { authPlugin } from './modules/auth/index.js';
import { charactersPlugin } from './modules/characters/index.js';
import { chatPlatformPlugin } from './modules/chat-platform/index.js';
import { chatNamespaceDoc, chatPlugin, chatSockets } from './modules/chat/index.js';
import { filesPlugin } from './modules/files/index.js';
import { inventoryEventDocs, inventoryPlugin, inventorySockets } from './modules/inventory/index.js';
import { mcpPlugin } from './modules/mcp/index.js';
import { memoryPlugin } from './modules/memory/index.js';
import { observerNamespaceDoc, observerPlugin, observerSockets } from './modules/observer/index.js';
import { personaPlugin } from './modules/persona/index.js';
import { protocolsPlugin } from './modules/protocols/index.js';
import { syncPlugin } from './modules/sync/index.js';
import { timelinePlugin } from './modules/timeline/index.js';
import { trainingEventDocs, trainingPlugin, trainingSockets } from './modules/training/index.js';
import { usersPlugin } from './modules/users/index.js';
import { webhooksPlugin } from './modules/webhooks/index.js';
import { workflowsPlugin } from './modules/workflows/index.js';
import { suggestionsPlugin } from './modules/suggestions/index.js';
import { VERSION } from './version.js';

export interface BuiltApp {
  app: App;
  io: SocketServer;
}

export interface BuildAppOptions {
  /** Extra routes registered before the app is sealed (benchmarks use it for a baseline route). */
  extraRoutes?: (app: App) => void;
  /** The built web console to serve at `/` (default web/dist). */
  webDir?: string;
}

export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<BuiltApp> {
  const app = Fastify({
    // pino's Logger and Fastify's logger type differ only in typing; the instance is the same.
    loggerInstance: deps.log as unknown as FastifyBaseLogger,
    bodyLimit: deps.config.limits.bodyBytes,
    // A request's body has a deadline as its headers do: one never finished holds no connection
    // for ever (Node answers 408). Node checks it on an interval, a quarter of the deadline here,
    // and only while the headers' own deadline is no later (Node's default: 60 s).
    requestTimeout: deps.config.limits.requestTimeoutMs,
    http: {
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(deps.config.limits.requestTimeoutMs / 4)),
      headersTimeout: Math.min(60_000, deps.config.limits.requestTimeoutMs),
    },
    trustProxy: deps.config.trustProxy,
    // Closing cuts the connections still open: a node closes after its drain's grace (startup/
    // shutdown.ts), and a request still open then, such as an upload stalled half way, would
    // otherwise hold the close until Node's next check of its deadline, past the grace.
    forceCloseConnections: true,
    // Honour a caller's request id (for tracing across services) when it is sane.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors raised before a route runs are problem+json too: a badly encoded URL and an over-long
    // path parameter (routing), a request line or headers over Node's limit (the HTTP parser).
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  trackResponses(app.server);
  registerDrain(app, deps.drain);
  registerRequestSpans(app);
  app.setValidatorCompiler(validatorCompiler);
  // Before every route's schemas: no U+0000 or unpaired surrogate in params, body, query, headers.
  app.addHook('preValidation', rejectUnsafeText);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onSend', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });

  registerProblemHandlers(app);
  registerJsonBodies(app);
  // Every body limit (JSON, uploads, training files): the client reads its 413 before the close.
  registerLingeringClose(app);

  await registerDocs(app, {
    version: VERSION,
    publicUrl: deps.config.publicUrl,
    // Training's progress events and inventory updates share the default namespace with chat.
    namespaces: [
      withEmits(withEmits(chatNamespaceDoc, trainingEventDocs), inventoryEventDocs),
      observerNamespaceDoc,
    ],
  });

  await app.register(fastifyRateLimit, {
    global: false,
    store: rateLimitStore(deps.counters),
    errorResponseBuilder: (_req, ctx) =>
      new AppError(
        'rate_limited',
        `Too many requests; retry in ${Math.ceil(ctx.ttl / 1000)} s`,
        {},
        { 'retry-after': String(Math.ceil(ctx.ttl / 1000)) },
      ),
  });

  // Before the sign-in check: a preflight is answered without credentials.
  await registerCors(app, deps.config.corsOrigins);
  const accountState = (id: number) => deps.accounts.get(id);
  registerAuth(app, {
    verifyAccessToken: (t) => deps.tokens.verify(t),
    accountState,
    verifyApiKey: (k) => deps.services.auth.verifyApiKey(k),
    adminUserIds: deps.config.adminUserIds,
  });
  registerMetrics(app, deps.metrics, deps.config.metricsToken);
  deps.metrics.gauge(
    'memory_sketch_index_bytes',
    "Bytes of this process's sketch index (the vector side without pgvector; bounded by MEMORY_SKETCH_CACHE_MB)",
    () => deps.services.memory.sketchIndexStats()?.bytes ?? 0,
  );
  registerAuditLog(app, deps.services.audit);
  registerWeb(app, options.webDir);

  await registerModules(app, deps);
  options.extraRoutes?.(app);

  const socketAuth = {
    verifyAccessToken: (t: string) => deps.tokens.verify(t),
    accountState,
    verifyApiKey: async () => null,
    adminUserIds: deps.config.adminUserIds,
    onAccountChange: (listener: (id: number) => void) => deps.accounts.onChange(listener),
    socketsPerUser: deps.config.limits.socketsPerUser,
  };
  const io = createSocketServer(
    app.server,
    socketAuth,
    deps.log,
    {
      // Four 5 MiB images in base64 (a chatMessage's imageBase64Array) fit at the default 1 MiB.
      maxPayloadBytes: deps.config.limits.bodyBytes * 30,
      authTimeoutMs: deps.config.limits.socketAuthTimeoutMs,
    },
    { allowed: deps.config.corsOrigins, publicUrl: deps.config.publicUrl },
    () => !deps.drain.active,
  );
  const releaseAdapter = attachRealtimeAdapter(io, {
    database: deps.database,
    url: deps.config.database.url,
    log: deps.log,
  });
  const s = deps.services;
  chatSockets(io, { chat: s.chat, log: deps.log });
  trainingSockets(io, { bus: deps.bus });
  inventorySockets(io, { bus: deps.bus, inventory: s.inventory });
  observerSockets(io, {
    instances: s.instances,
    bus: deps.bus,
    authenticate: (nsp: Namespace, rejudged) => authenticateSocket(nsp, socketAuth, deps.log, rejudged),
  });
  app.addHook('onClose', async () => {
    await io.close();
    await releaseAdapter();
  });

  await app.ready();
  return { app, io };
}

/** Mounts each module's plugin with the services and settings it needs, in a fixed order (the
 * order of the OpenAPI document's paths). */
async function registerModules(app: App, deps: Deps): Promise<void> {
  const { config, services: s } = deps;
  await app.register(authPlugin, {
    auth: s.auth,
    accountEmail: s.accountEmail,
    oauth: s.oauth,
    authPerMinute: config.limits.authPerMinute,
    countryHeader: config.oauth.countryHeader,
    publicUrl: config.publicUrl,
  });
  await app.register(usersPlugin, { users: s.users });
  await app.register(accountPlugin, { account: s.account });
  await app.register(adminPlugin, {
    health: {
      health: deps.health,
      database: { kind: deps.database.kind, vector: deps.database.capabilities.vector },
      jobs: () => deps.jobs.status(),
      models: () => deps.modelStatus(),
      sketchIndex: () => s.memory.sketchIndexStats(),
      services: config.services,
      rateLimitStore: deps.counters.kind,
    },
    stats: {
      users: s.users,
      auth: s.auth,
      memory: s.memory,
      chat: s.conversations,
      timeline: s.timeline,
      models: deps.models,
    },
  });
  await app.register(auditPlugin, { audit: s.audit });
  await app.register(schedulerPlugin, { scheduler: s.scheduler });
  await app.register(chatPlugin, {
    chat: s.chat,
    conversations: s.conversations,
    characters: s.characters,
  });
  await app.register(personaPlugin, { persona: s.persona });
  await app.register(timelinePlugin, { instances: s.instances });
  await app.register(observerPlugin, { observer: s.observer, reflections: s.observerReflections });
  await app.register(consciousnessPlugin, { consciousness: s.consciousness });
  await app.register(charactersPlugin, { characters: s.characters });
  await app.register(inventoryPlugin, { inventory: s.inventory });
  await app.register(syncPlugin, {
    sync: s.sync,
    players: s.players,
    playersPerMinute: config.limits.playersPerMinute,
  });
  await app.register(protocolsPlugin, { protocols: s.protocols });
  await app.register(chatPlatformPlugin, {
    chatPlatform: s.chatPlatform,
    chatPlatformCommands: s.chatPlatformCommands,
  });
  await app.register(memoryPlugin, { memory: s.memory });
  await app.register(workflowsPlugin, {
    workflows: s.workflows,
    workflowTasks: s.workflowTasks,
    workflowRuns: s.workflowRuns,
  });
  await app.register(webhooksPlugin, { webhooks: s.webhooks });
  await app.register(suggestionsPlugin, { suggestions: s.suggestions });
  await app.register(mcpPlugin, {
    memory: s.memory,
    timeline: s.timeline,
    inventory: s.inventory,
    version: VERSION,
  });
  // Last: its routes were registered after every other module's before modules became plugins,
  // and the OpenAPI document keeps that order.
  await app.register(filesPlugin, {
    files: s.files,
    limits: { fileBytes: config.limits.uploadBytes, files: config.limits.uploadFiles },
  });
  await app.register(trainingPlugin, {
    training: s.training,
    limits: { fileBytes: config.training.fileBytes, imageBytes: config.training.imageBytes },
  });
}
