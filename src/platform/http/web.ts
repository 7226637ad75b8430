// The web console (web/, built by Vite into web/dist): its files served at `/`. Hashed assets
// (`/assets/<name>-<hash>.<ext>`) are immutable for a year; `index.html` is never cached, so a new
// build is picked up on the next load. The client routes the single-page app owns (its route
// table, web/src/routes.ts) answer index.html; nothing else is a fallback, so `/api`, `/docs`,
// `/socket.io` and `/metrics` keep their own answers (and an unknown path its problem+json 404).
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_PATHS } from '../../../web/src/routes.js';

/** The paths the single-page app routes itself (mail links included): the console's own route
 * table, so a page added there answers a reload and a deep link here too. It lives in web/src,
 * where the console's shell reads it; it is plain data with no import, so the server's type
 * check and runtime take it as they are. */
export const WEB_ROUTES: readonly string[] = CONSOLE_PATHS;

/** No inline script or style, no other origin; sockets and fetches back to this origin only. */
export const WEB_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

export const DEFAULT_WEB_DIR = resolve(import.meta.dirname, '../../../web/dist');

function secure(reply: FastifyReply) {
  return reply
    .header('content-security-policy', WEB_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

export function registerWeb(app: FastifyInstance, dir: string = DEFAULT_WEB_DIR) {
  const indexFile = join(dir, 'index.html');
  // Read once when built (the process serves one build); re-read when it appears later.
  let index: string | null = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : null;
  const page = async (_req: unknown, reply: FastifyReply) => {
    index ??= existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : null;
    secure(reply).header('cache-control', 'no-cache');
    if (index === null)
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The web console is not built: run `npm run web:build` (npm start does it).\n');
    return reply.type('text/html; charset=utf-8').send(index);
  };
  for (const url of WEB_ROUTES) app.get(url, { config: { auth: 'public' }, schema: { hide: true } }, page);

  const assets = resolve(dir, 'assets');
  app.get<{ Params: { file: string } }>(
    '/assets/:file',
    { config: { auth: 'public' }, schema: { hide: true } },
    async (req, reply) => {
      const name = req.params.file;
      const type = TYPES[extname(name)];
      // One path segment of safe characters: no traversal, no hidden files.
      if (!type || !/^[\w.-]+$/.test(name) || name.startsWith('.')) return reply.callNotFound();
      let body: Buffer;
      try {
        body = await readFile(join(assets, name));
      } catch {
        return reply.callNotFound();
      }
      return secure(reply)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type(type)
        .send(body);
    },
  );
}
