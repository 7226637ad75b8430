// A real identity provider for tests: oidc-provider on 127.0.0.1 with its interactions answered
// by code (who signs in next, or a refusal) instead of HTML forms, plus a GitHub-like user API
// for the plain OAuth 2.0 case. And a small browser: a real HTTP client that follows redirects
// and keeps cookies, as a user's browser does through an external login.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface IdpUser {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export interface TestIdp {
  issuer: string;
  provider: Provider;
  /** Who signs in at the next login prompt, or 'deny' to have the user refuse. */
  nextLogin: IdpUser | 'deny';
  close(): Promise<void>;
}

export async function startOidcProvider(clients: IdpClient[]): Promise<TestIdp> {
  const accounts = new Map<string, IdpUser>();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ grant_types: ['authorization_code'], response_types: ['code'], ...c })),
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-idp-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    ttl: {
      AuthorizationCode: 60,
      AccessToken: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    // Every client must use PKCE, so a code without its verifier is worthless.
    pkce: { required: () => true },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, id: string) => {
      const a = accounts.get(id);
      return a ? { accountId: id, claims: () => ({ ...a }) } : undefined;
    },
  });

  const idp: TestIdp = {
    issuer,
    provider,
    nextLogin: { sub: 'nobody' },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      const who = idp.nextLogin;
      if (who === 'deny') {
        await provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'The user refused' },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      accounts.set(who.sub, who);
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: who.sub } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    // Consent: grant what was asked for.
    const grant = new provider.Grant({
      accountId: details.session!.accountId,
      clientId: String(details.params.client_id),
    });
    const d = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  // A plain OAuth 2.0 provider's own user API (GitHub's /user and the like): `id`, not `sub`.
  async function userApi(req: IncomingMessage, res: ServerResponse) {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const at = token ? await provider.AccessToken.find(token) : undefined;
    const account = at ? accounts.get(at.accountId) : undefined;
    if (!account) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Bad credentials"}');
      return;
    }
    const body = {
      id: /^\d+$/.test(account.sub) ? Number(account.sub) : account.sub,
      login: account.name?.toLowerCase().replace(/\s+/g, '-'),
      name: account.name,
      email: account.email,
      verified_email: account.email_verified,
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  const handle = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = path.startsWith('/interaction/') ? interaction : path === '/api/user' ? userApi : undefined;
    if (!route) return handle(req, res);
    route(req, res).catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  return idp;
}

/** A browser's part of a redirect dance: follows Location headers with a cookie jar, rewriting
 * origins as a reverse proxy would (the service's PUBLIC_URL → where the test app listens), and
 * stops at the first URL that starts with `stopAt` without requesting it. */
export class TestBrowser {
  private readonly cookies = new Map<string, Map<string, string>>();
  /** Every URL requested, in order (the original, not the rewritten, form). */
  readonly visited: string[] = [];

  constructor(private readonly origins: Record<string, string> = {}) {}

  private rewrite(url: string): string {
    for (const [from, to] of Object.entries(this.origins))
      if (url.startsWith(from)) return to + url.slice(from.length);
    return url;
  }

  async request(url: string, init: { headers?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(this.rewrite(url));
    const jar = this.cookies.get(target.host) ?? new Map<string, string>();
    this.cookies.set(target.host, jar);
    const headers: Record<string, string> = { ...init.headers };
    if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    this.visited.push(url);
    const res = await fetch(target, { redirect: 'manual', headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some(
        (a) =>
          /^\s*max-age=0\s*$/i.test(a) ||
          (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()),
      );
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects from `url` until a Location starts with `stopAt`; answers that location.
   * `headers` go with every request to the service (e.g. the proxy's country header). */
  async follow(url: string, stopAt: string, headers: Record<string, string> = {}): Promise<string> {
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      const res = await this.request(current, { headers });
      await res.arrayBuffer();
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location)
        throw new Error(`${current} answered ${res.status} without a redirect`);
      const next = new URL(location, current).href;
      if (next.startsWith(stopAt)) return next;
      current = next;
    }
    throw new Error('too many redirects');
  }
}
