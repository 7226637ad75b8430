// The API's own documentation: the OpenAPI 3.1 document (`/api/openapi.json`, from the routes'
// zod schemas), the AsyncAPI 3.0 document of the Socket.IO namespaces (`/api/asyncapi.json`, from
// the event docs the modules give), and the browsable reference at `/docs`, whose introduction
// lists the Socket.IO events and links the AsyncAPI document.
//
// The reference's page and script come from Scalar's Fastify plugin, four megabytes of code and
// two hundred modules with what it brings: a tenth of what a start loads, for a page few starts
// ever serve. It is loaded at the first visit instead, into a Fastify app of its own that answers
// every `/docs` request through `inject`.
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { documentOperation } from './docs.operations.js';
import { asyncApiDocument, eventsMarkdown, type NamespaceDoc } from '../realtime/asyncapi.js';
import type { App } from './types.js';

export interface DocsOptions {
  version: string;
  publicUrl: string;
  /** The Socket.IO namespaces, described by their modules. */
  namespaces: NamespaceDoc[];
}

const TITLE = 'Assistant Platform API';

export async function registerDocs(app: App, { version, publicUrl, namespaces }: DocsOptions): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: TITLE,
        version,
        description: [
          'Backend for a persistent conversational assistant. Errors are RFC 9457 problem+json with a stable `code`. ' +
            'Authenticate with `Authorization: Bearer <access token>`; sync endpoints and chat-platform commands also accept `X-API-Key`.',
          '',
          '## Real time (Socket.IO)',
          '',
          'Chat and the observers\u2019 live timeline run over Socket.IO on the same port (path `/socket.io`). ' +
            'Every event, with its payload schema and an example, is in the [AsyncAPI 3.0 document](/api/asyncapi.json).',
          '',
          eventsMarkdown(namespaces),
        ].join('\n'),
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }],
    },
    // The zod provider makes JSON Schema of the route's schemas; documentOperation adds who may
    // call the route and what each of its answers means.
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      return { ...out, schema: documentOperation(input.route, out.schema) };
    },
    // Named schemas sorted by name: their order would otherwise follow the order in which modules
    // happen to be imported, and the document would change with a refactor that changes nothing.
    transformObject: (doc) => {
      const out = jsonSchemaTransformObject(doc);
      const components = (out as { components?: { schemas?: Record<string, unknown> } }).components;
      const schemas = components?.schemas;
      if (!schemas) return out;
      const sorted = Object.keys(schemas)
        .sort()
        .map((name) => [name, schemas[name]] as const);
      return { ...out, components: { ...components, schemas: Object.fromEntries(sorted) } } as typeof out;
    },
  });
  for (const url of ['/docs', '/docs/*'])
    app.get(url, { config: { auth: 'public' }, schema: { hide: true } }, referencePage);
  app.get('/api/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  const asyncapi = asyncApiDocument(
    {
      title: `${TITLE}: real-time events`,
      version,
      description:
        'The Socket.IO namespaces of the Assistant Platform: what a client sends (with the acknowledgement it gets back) and what the server emits. The REST API is described at /api/openapi.json.',
      publicUrl,
    },
    namespaces,
  );
  app.get('/api/asyncapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => asyncapi);
}

let reference: Promise<FastifyInstance> | undefined;

/** A `/docs` request, answered by the reference's own app (made at the first one). */
async function referencePage(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!reference) {
    reference = (async () => {
      const { default: scalar } = await import('@scalar/fastify-api-reference');
      const docs = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
      await docs.register(scalar, { routePrefix: '/docs', configuration: { url: '/api/openapi.json' } });
      await docs.ready();
      return docs;
    })();
    // A failed load is tried again by the next visit.
    reference.catch(() => (reference = undefined));
  }
  const res = await (await reference).inject({ method: 'GET', url: req.url });
  // A path the reference does not have: this app's own 404 (problem+json), as for any other.
  if (res.statusCode === 404) {
    reply.callNotFound();
    return reply;
  }
  for (const name of ['content-type', 'content-disposition', 'location'])
    if (res.headers[name] !== undefined) void reply.header(name, res.headers[name]);
  return reply.status(res.statusCode).send(res.rawPayload);
}
