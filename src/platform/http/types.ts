import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problemSchema } from './problem.js';

/** The Fastify instance every module registers its routes on (zod-typed). */
export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** A module's HTTP door: a Fastify plugin given only the services its routes call (never the
 * whole composition root), mounted by app.ts with `app.register(plugin, options)`. */
export type AppPlugin<Options extends object> = FastifyPluginAsyncZod<Options>;

/** Error responses for OpenAPI: route schemas spread this into `response`. */
export const problems = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, problemSchema])) as Record<number, typeof problemSchema>;

export const noContent = z.null().describe('No content');

// Examples in a schema's metadata (`.meta({ examples: [...] })`, shown by the OpenAPI and AsyncAPI
// documents) are checked by the compiler against the schema's own input or output type.
declare module 'zod' {
  interface GlobalMeta {
    examples?: (z.$input | z.$output)[];
  }
}
