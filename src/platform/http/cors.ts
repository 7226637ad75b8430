// Browser apps on other origins (contract: "Doors for games"): CORS_ORIGINS, an allow-list of
// origins, applies to REST (preflights included, @fastify/cors) and to Socket.IO alike. Empty,
// the default, means the same origin only: no CORS header for anyone, and a WebSocket or polling
// handshake from another page's origin refused.
import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Headers a page on an allowed origin may read from an answer. */
const EXPOSED = ['retry-after', 'x-request-id', 'idempotent-replayed', 'location', 'content-disposition'];

/** Whether a request with this `Origin` may be served to its page: none (not a browser page), the
 * service's own origin (its public URL, or the host it was reached at), or a listed one. */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  allowed: readonly string[],
  publicUrl: string,
): boolean {
  if (origin === undefined) return true;
  if (allowed.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.origin === new URL(publicUrl).origin || (host !== undefined && url.host === host);
}

/** CORS on every route (before the sign-in check, so a preflight is answered without a token). */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  // The preflight route @fastify/cors adds is public: a preflight carries no credentials.
  app.addHook('onRoute', (route) => {
    if (route.method === 'OPTIONS' && route.url === '*') route.config = { ...route.config, auth: 'public' };
  });
  await app.register(fastifyCors, {
    origin: origins.length > 0 ? [...origins] : false,
    credentials: true,
    exposedHeaders: EXPOSED,
    maxAge: 600,
  });
}
