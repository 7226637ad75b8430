// buildApp(deps): the HTTP server and Socket.IO, without listening (tests call it directly).
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Server as SocketServer } from 'socket.io';
import type { Deps } from './deps.js';
import { registerAuth } from './platform/http/auth.js';
import { registerMetrics } from './platform/http/metrics.js';
import { AppError, registerProblemHandlers } from './platform/http/problem.js';
import { rateLimitStore } from './platform/http/rate-limit.js';
import type { App } from './platform/http/types.js';
import { createSocketServer } from './platform/realtime/socket-server.js';
import { attachRealtimeAdapter } from './platform/realtime/adapter.js';
import { modules } from './modules/index.js';
import { VERSION } from './version.js';

export interface BuiltApp {
  app: App;
  io: SocketServer;
}

export interface BuildAppOptions {
  /** Extra routes registered before the app is sealed (benchmarks use it for a baseline route). */
  extraRoutes?: (app: App) => void;
}

export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<BuiltApp> {
  const app = Fastify({
    // pino's Logger and Fastify's logger type differ only in typing; the instance is the same.
    loggerInstance: deps.log as unknown as FastifyBaseLogger,
    bodyLimit: deps.config.limits.bodyBytes,
    trustProxy: deps.config.trustProxy,
    // Honour a caller's request id (for tracing across services) when it is sane.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onSend', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });

  registerProblemHandlers(app);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Assistant Platform API',
        version: VERSION,
        description:
          'Backend for a persistent conversational assistant. Errors are RFC 9457 problem+json with a stable `code`. ' +
          'Authenticate with `Authorization: Bearer <access token>`; sync endpoints also accept `X-API-Key`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(scalar, { routePrefix: '/docs', configuration: { url: '/api/openapi.json' } });
  app.get('/api/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

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

  registerAuth(app, {
    verifyAccessToken: (t) => deps.tokens.verify(t),
    verifyApiKey: (k) => deps.services.auth.verifyApiKey(k),
    adminUserIds: deps.config.adminUserIds,
  });
  registerMetrics(app, deps.metrics);

  for (const m of modules) m.routes?.(app, deps);
  options.extraRoutes?.(app);

  const io = createSocketServer(
    app.server,
    {
      verifyAccessToken: (t) => deps.tokens.verify(t),
      verifyApiKey: async () => null,
      adminUserIds: deps.config.adminUserIds,
    },
    deps.log,
    deps.config.limits.bodyBytes * 30,
  );
  const releaseAdapter = attachRealtimeAdapter(io, deps);
  for (const m of modules) m.sockets?.(io, deps);
  app.addHook('onClose', async () => {
    await io.close();
    await releaseAdapter();
  });

  await app.ready();
  return { app, io };
}
