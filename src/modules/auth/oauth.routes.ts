// External login (contract: "Identity and tokens"): GET /api/auth/<idp> → the provider,
// GET /api/auth/<idp>/callback → the app with a one-time code, POST /api/auth/exchange → tokens.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { clientTypeSchema, tokenResponse } from './auth.schemas.js';
import type { OAuthRedirect, OAuthService } from './oauth.service.js';
import { publicAuthRoute } from './auth.config.js';

const idpParams = z.object({
  idp: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,40}$/, 'not a provider name')
    .meta({ examples: ['google'] }),
});
const providersResponse = z
  .object({ providers: z.array(z.object({ name: z.string() })) })
  .meta({ examples: [{ providers: [{ name: 'google' }, { name: 'github' }] }] });
const redirect = z.null().describe('Location carries the next step');

function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

export function oauthRoutes(
  app: App,
  opts: { oauth: OAuthService; authPerMinute: number; countryHeader: string | undefined; publicUrl: string },
) {
  const { oauth } = opts;
  const config = publicAuthRoute(opts.authPerMinute);
  const tags = ['auth'];
  const countryHeader = opts.countryHeader?.toLowerCase();
  const country = (headers: Record<string, string | string[] | undefined>) => {
    const v = countryHeader ? headers[countryHeader] : undefined;
    return Array.isArray(v) ? v[0] : v;
  };
  // The browser-binding cookie: sent back only to this provider's callback, never readable by
  // scripts, and (SameSite=Lax) still sent on the provider's top-level redirect back to us.
  const secure = opts.publicUrl.startsWith('https:') ? '; Secure' : '';
  const setCookie = (idp: string, r: OAuthRedirect): string | undefined => {
    const attrs = `Path=/api/auth/${idp}/callback; HttpOnly; SameSite=Lax${secure}`;
    if (r.setCookie)
      return `${r.setCookie.name}=${r.setCookie.value}; Max-Age=${r.setCookie.maxAgeSeconds}; ${attrs}`;
    if (r.clearCookie) return `${r.clearCookie}=; Max-Age=0; ${attrs}`;
    return undefined;
  };

  app.get(
    '/api/auth/providers',
    {
      config,
      schema: {
        tags,
        summary: 'The external login providers configured (names only)',
        description:
          'The names of the identity providers configured in OAUTH_PROVIDERS, in configuration order, so that a sign-in page can offer a button for each (linking to `/api/auth/<name>`). Names only: never client ids, secrets or URLs. Public; an empty list when none is configured.',
        response: { 200: providersResponse, ...problems(429) },
      },
    },
    async () => ({ providers: oauth.providerNames().map((name) => ({ name })) }),
  );

  app.post(
    '/api/auth/exchange',
    {
      config,
      schema: {
        tags,
        summary: 'Trade the one-time code of an external login for tokens (once, within 60 s)',
        description:
          "The app's last step of an external login: trades the one-time `code` the callback put in the URL fragment for tokens, once and within 60 seconds (401 otherwise).",
        body: z.object({ code: z.string().min(1).max(200) }).meta({ examples: [{ code: 'lc_Q2v8xN4pR7' }] }),
        response: { 200: tokenResponse, ...problems(400, 401, 429) },
      },
    },
    async (req) => oauth.exchange(req.body.code),
  );

  app.get(
    '/api/auth/:idp',
    {
      config,
      schema: {
        tags,
        summary: 'Start an external login (302 to the provider, with state, nonce and PKCE S256)',
        description:
          'Starts an external login with the configured provider `idp` (OAUTH_PROVIDERS): redirects the browser to the provider with state, nonce and a PKCE challenge, and binds the flow to this browser with a cookie. An unknown provider is 404.',
        params: idpParams,
        querystring: z.object({ clientType: clientTypeSchema.default('web_portal') }),
        response: { 302: redirect, ...problems(400, 404, 429) },
      },
    },
    async (req, reply) => {
      const r = await oauth.start(req.params.idp, req.query.clientType, country(req.headers));
      const cookie = setCookie(req.params.idp, r);
      if (cookie) void reply.header('set-cookie', cookie);
      return reply.header('cache-control', 'no-store').redirect(r.location, 302);
    },
  );

  app.get(
    '/api/auth/:idp/callback',
    {
      config,
      schema: {
        tags,
        summary:
          "The provider's redirect: 302 to APP_URL/auth/callback#code=<one-time code> or #error=<code>",
        description:
          "Where the provider sends the browser back: checks state, the browser's cookie, nonce and PKCE, signs the user in or creates the account (a verified provider email links to an existing account), and redirects to APP_URL with a one-time code (or an error) in the fragment.",
        params: idpParams,
        response: { 302: redirect, ...problems(404, 429) },
      },
    },
    async (req, reply) => {
      // The raw query goes to openid-client as the provider sent it (code, state, iss, error…).
      const query = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
      const r = await oauth.callback(
        req.params.idp,
        query,
        country(req.headers),
        parseCookies(req.headers.cookie),
      );
      const cookie = setCookie(req.params.idp, r);
      if (cookie) void reply.header('set-cookie', cookie);
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .redirect(r.location, 302);
    },
  );
}
