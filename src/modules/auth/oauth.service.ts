// External login (spec "Authentication": external OAuth 2.0; contract: "Identity and
// tokens"): the authorisation-code flow with state, nonce and PKCE (S256) through openid-client,
// account creation or linking, and a one-time code that the app trades for our tokens, so no
// token ever appears in a URL. Every piece of flow state lives in the database (several nodes).
import { isUniqueViolation } from '../../platform/db/errors.js';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import type { OAuthProviderConfig } from '../../config.js';
import { type Db, transaction } from '../../platform/db/database.js';
import { AppError, notFound } from '../../platform/http/problem.js';
import type { ClientType } from '../../platform/security/identity.rules.js';
import { randomToken, safeEqual, sha256 } from '../../platform/security/secrets.js';
import type { UserRow, UsersService } from '../users/index.js';
import type { AuthService } from './auth.service.js';
import type { TokenResponse } from './auth.schemas.js';
import * as repo from './oauth.repository.js';

/** The `#error=` codes of contract: "Identity and tokens". */
export type OAuthFailure = 'access_denied' | 'invalid_state' | 'provider_error' | 'region_blocked';

export interface OAuthServiceOptions {
  providers: OAuthProviderConfig[];
  publicUrl: string;
  appUrl: string;
  blockedCountries: string[];
  /** How long a started login may take before its state is refused. */
  stateTtlSeconds: number;
  /** Seconds the app has to trade the one-time code (the API contract: 60). */
  loginCodeTtlSeconds: number;
  /** Seconds allowed for each request to a provider. */
  providerTimeoutSeconds: number;
}

/** Where to send the browser, and the cookie that binds a started login to that browser. */
export interface OAuthRedirect {
  location: string;
  setCookie?: { name: string; value: string; maxAgeSeconds: number };
  clearCookie?: string;
}

/** What we keep of the provider's answer about the user. */
export interface ExternalIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

interface Provider {
  cfg: OAuthProviderConfig;
  /** OIDC when the scopes ask for `openid`: an ID token is expected and a nonce sent. Otherwise
   * plain OAuth 2.0, where the user-info URL is the provider's own user API. */
  oidc: boolean;
  configuration?: Promise<client.Configuration>;
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const isLoopback = (url: URL) => LOOPBACK.has(url.hostname);

/** contract: "Operations": provider URLs must be https, except loopback hosts. */
function checkProviderUrls(p: OAuthProviderConfig): URL[] {
  const urls = [p.issuer, p.authorizationUrl, p.tokenUrl, p.userinfoUrl]
    .filter((u): u is string => u !== undefined)
    .map((u) => new URL(u));
  for (const url of urls)
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url)))
      throw new Error(
        `OAUTH_PROVIDERS: provider "${p.name}" must use https (${url.href}); plain http is accepted for loopback hosts only`,
      );
  return urls;
}

const EMAIL_NOT_VERIFIED = 'email_not_verified';

export class OAuthService {
  private readonly providers = new Map<string, Provider>();
  private readonly blocked: Set<string>;

  constructor(
    private readonly db: Db,
    private readonly users: UsersService,
    private readonly auth: AuthService,
    private readonly log: Logger,
    private readonly opts: OAuthServiceOptions,
  ) {
    for (const cfg of opts.providers) {
      if (this.providers.has(cfg.name))
        throw new Error(`OAUTH_PROVIDERS: provider "${cfg.name}" is listed twice`);
      checkProviderUrls(cfg);
      this.providers.set(cfg.name, { cfg, oidc: cfg.scopes.includes('openid') });
    }
    this.blocked = new Set(opts.blockedCountries.map((c) => c.toUpperCase()));
  }

  /** The configured providers' names, in configuration order (never their secrets or URLs). */
  providerNames(): string[] {
    return [...this.providers.keys()];
  }

  /** The redirect URI registered at the provider (contract: "Operations"). */
  callbackUrl(name: string): string {
    return `${this.opts.publicUrl}/api/auth/${encodeURIComponent(name)}/callback`;
  }

  /** Where the browser goes back to the app; the result travels in the fragment, which never
   * reaches a server log or a Referer header. */
  appRedirect(result: { code: string } | { error: OAuthFailure }): string {
    const fragment = 'code' in result ? `code=${encodeURIComponent(result.code)}` : `error=${result.error}`;
    return `${this.opts.appUrl}/auth/callback#${fragment}`;
  }

  /** spec: external OAuth 2.0 is "available globally except one region": BLOCKED_COUNTRIES,
   * judged from the country a trusted proxy puts in COUNTRY_HEADER. */
  isBlocked(country: string | undefined): boolean {
    return country !== undefined && this.blocked.has(country.trim().toUpperCase());
  }

  /** The cookie that ties a login to the browser that started it: without it, a callback URL
   * captured by someone else (login CSRF: signing a victim in to the attacker's account) or
   * replayed elsewhere is refused. Named after the state, so logins in two tabs do not clash. */
  bindingCookieName(state: string): string {
    return `oauth_${sha256(state).slice(0, 16)}`;
  }

  private fail(error: OAuthFailure): OAuthRedirect {
    return { location: this.appRedirect({ error }) };
  }

  private provider(name: string): Provider {
    const p = this.providers.get(name);
    if (!p) throw notFound('identity provider');
    return p;
  }

  /** openid-client's view of the provider. Discovery runs on first use, not at boot, so a provider
   * that is down does not stop the service; a failed discovery is retried on the next login. */
  private configuration(p: Provider): Promise<client.Configuration> {
    p.configuration ??= this.createConfiguration(p.cfg).catch((err: unknown) => {
      p.configuration = undefined;
      throw err;
    });
    return p.configuration;
  }

  private async createConfiguration(cfg: OAuthProviderConfig): Promise<client.Configuration> {
    const auth =
      cfg.tokenAuthMethod === 'client_secret_post'
        ? client.ClientSecretPost(cfg.clientSecret)
        : client.ClientSecretBasic(cfg.clientSecret);
    // Plain http only reaches this point for loopback hosts (checkProviderUrls).
    const insecure = checkProviderUrls(cfg).some((u) => u.protocol === 'http:');
    const execute = insecure ? [client.allowInsecureRequests] : [];
    let config: client.Configuration;
    if (cfg.authorizationUrl && cfg.tokenUrl && cfg.userinfoUrl) {
      config = new client.Configuration(
        {
          // openid-client needs an issuer: the configured one, else the authorisation server's
          // origin stands in (ID tokens and RFC 9207 `iss` answers are checked against it).
          issuer: cfg.issuer ?? new URL(cfg.authorizationUrl).origin,
          authorization_endpoint: cfg.authorizationUrl,
          token_endpoint: cfg.tokenUrl,
          userinfo_endpoint: cfg.userinfoUrl,
        },
        cfg.clientId,
        cfg.clientSecret,
        auth,
      );
      for (const fn of execute) fn(config);
    } else {
      config = await client.discovery(new URL(cfg.issuer!), cfg.clientId, cfg.clientSecret, auth, {
        execute,
        timeout: this.opts.providerTimeoutSeconds,
      });
    }
    config.timeout = this.opts.providerTimeoutSeconds;
    return config;
  }

  /** GET /api/auth/<idp>: records the flow and answers the provider's authorisation URL. */
  async start(name: string, clientType: ClientType, country: string | undefined): Promise<OAuthRedirect> {
    const p = this.provider(name);
    if (this.isBlocked(country)) return this.fail('region_blocked');
    let config: client.Configuration;
    try {
      config = await this.configuration(p);
    } catch (err) {
      this.log.warn({ err, provider: name }, 'identity provider discovery failed');
      return this.fail('provider_error');
    }
    const state = randomToken(32);
    const binding = randomToken(32);
    const codeVerifier = randomToken(48);
    const nonce = p.oidc ? randomToken(32) : null;
    await repo.deleteStaleFlows(this.db);
    await repo.insertFlow(this.db, {
      stateHash: sha256(state),
      browserHash: sha256(binding),
      provider: name,
      codeVerifier,
      nonce,
      clientType,
      expiresAt: new Date(Date.now() + this.opts.stateTtlSeconds * 1000),
    });
    const params: Record<string, string> = {
      redirect_uri: this.callbackUrl(name),
      scope: p.cfg.scopes.join(' '),
      state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    };
    if (nonce) params.nonce = nonce;
    return {
      location: client.buildAuthorizationUrl(config, params).href,
      setCookie: {
        name: this.bindingCookieName(state),
        value: binding,
        maxAgeSeconds: this.opts.stateTtlSeconds,
      },
    };
  }

  /** GET /api/auth/<idp>/callback: checks state (and that this browser started the login), nonce
   * and PKCE, reads the user, and answers where to send the browser (the app, with a one-time
   * code or an error). The binding cookie is cleared whatever the outcome. */
  async callback(
    name: string,
    query: URLSearchParams,
    country: string | undefined,
    cookies: Record<string, string | undefined>,
  ): Promise<OAuthRedirect> {
    const p = this.provider(name);
    const result = await this.finishLogin(p, query, country, cookies);
    const state = query.get('state');
    return state ? { ...result, clearCookie: this.bindingCookieName(state) } : result;
  }

  private async finishLogin(
    p: Provider,
    query: URLSearchParams,
    country: string | undefined,
    cookies: Record<string, string | undefined>,
  ): Promise<OAuthRedirect> {
    const name = p.cfg.name;
    if (this.isBlocked(country)) return this.fail('region_blocked');

    const state = query.get('state');
    // The flow is consumed before anything else: a state is good for one callback, so a replayed
    // or forged redirect finds nothing.
    const flow = state ? await repo.consumeFlow(this.db, sha256(state), name) : undefined;
    if (!state || !flow || flow.expires_at.getTime() <= Date.now()) return this.fail('invalid_state');
    const binding = cookies[this.bindingCookieName(state)];
    if (!binding || !safeEqual(sha256(binding), flow.browser_hash)) return this.fail('invalid_state');

    const idpError = query.get('error');
    if (idpError !== null) {
      this.log.info(
        { provider: name, error: idpError, description: query.get('error_description') },
        'identity provider answered with an error',
      );
      return this.fail(idpError === 'access_denied' ? 'access_denied' : 'provider_error');
    }

    let identity: ExternalIdentity;
    try {
      const config = await this.configuration(p);
      const currentUrl = new URL(this.callbackUrl(name));
      currentUrl.search = query.toString();
      const tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: flow.code_verifier,
        expectedState: state,
        ...(flow.nonce ? { expectedNonce: flow.nonce } : {}),
        idTokenExpected: p.oidc,
      });
      identity = await this.readIdentity(p, config, tokens);
    } catch (err) {
      this.log.warn({ err, provider: name }, 'external login failed at the provider');
      return this.fail('provider_error');
    }

    let user: UserRow;
    try {
      user = await this.linkOrCreate(name, identity);
    } catch (err) {
      if (err instanceof AppError && err.extensions.reason === EMAIL_NOT_VERIFIED)
        return this.fail('access_denied');
      throw err;
    }

    const code = randomToken(32);
    await repo.deleteStaleLoginCodes(this.db);
    await repo.insertLoginCode(this.db, {
      codeHash: sha256(code),
      userId: user.id,
      clientType: flow.client_type,
      expiresAt: new Date(Date.now() + this.opts.loginCodeTtlSeconds * 1000),
    });
    return { location: this.appRedirect({ code }) };
  }

  /** POST /api/auth/exchange: the one-time code → our token response (once, within its TTL). */
  async exchange(code: string): Promise<TokenResponse> {
    const row = await repo.consumeLoginCode(this.db, sha256(code));
    if (!row) throw new AppError('unauthenticated', 'The code is not valid, has expired or was already used');
    return this.auth.issue(await this.users.get(row.user_id), row.client_type);
  }

  private async readIdentity(
    p: Provider,
    config: client.Configuration,
    tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>,
  ): Promise<ExternalIdentity> {
    let info: Record<string, unknown>;
    const claims = tokens.claims();
    if (p.oidc && claims) {
      // The user-info answer must be about the subject of the verified ID token.
      info = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)) };
    } else {
      // Plain OAuth 2.0: the user-info URL is the provider's own API (GitHub's /user and the
      // like), which need not carry OIDC's `sub`.
      const url = p.cfg.userinfoUrl ?? config.serverMetadata().userinfo_endpoint;
      if (!url) throw new Error('the provider has no user-info URL');
      const res = await client.fetchProtectedResource(config, tokens.access_token, new URL(url), 'GET');
      if (!res.ok) throw new Error(`user-info request answered ${res.status}`);
      info = (await res.json()) as Record<string, unknown>;
    }
    const subject = info.sub ?? info.id;
    if ((typeof subject !== 'string' && typeof subject !== 'number') || String(subject) === '')
      throw new Error('the provider did not say who the user is (no sub or id)');
    const email =
      typeof info.email === 'string' && info.email.includes('@') ? info.email.trim().toLowerCase() : null;
    const verified = info.email_verified ?? info.verified_email;
    const name = [info.name, info.preferred_username, info.login].find(
      (n): n is string => typeof n === 'string' && n.trim() !== '',
    );
    return {
      subject: String(subject),
      email,
      emailVerified: email !== null && (verified === true || verified === 'true'),
      name: name?.trim().slice(0, 100) ?? null,
    };
  }

  /** The provider's subject finds a linked account; otherwise an account with the same email is
   * linked, but only when the provider says it verified that address (else anyone could claim
   * a stranger's account by typing their email at some provider); otherwise a new account. */
  private async linkOrCreate(provider: string, id: ExternalIdentity): Promise<UserRow> {
    try {
      return await this.linkOrCreateOnce(provider, id);
    } catch (err) {
      // Two first logins of one provider account at once: the loser hit the unique identity (or
      // email) the winner just stored; a second pass finds it and links to it.
      const unique = isUniqueViolation(err) || (err instanceof AppError && err.code === 'conflict');
      if (!unique) throw err;
      return this.linkOrCreateOnce(provider, id);
    }
  }

  private linkOrCreateOnce(provider: string, id: ExternalIdentity): Promise<UserRow> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const linked = await repo.findIdentity(trx, provider, id.subject);
      if (linked) {
        await repo.touchIdentity(trx, linked.id, id.email);
        return this.users.get(linked.user_id, trx);
      }
      const existing = id.email ? await this.users.findByEmail(id.email, trx) : undefined;
      if (existing) {
        if (!id.emailVerified)
          throw new AppError(
            'forbidden',
            'An account with this email exists and the provider has not verified the address',
            {
              reason: EMAIL_NOT_VERIFIED,
            },
          );
        if (!existing.email_verified) {
          // Whoever registered this address never proved it; its verified owner takes the
          // account over, and any session the registrant opened ends.
          await this.users.claim(existing.id, trx);
          await this.auth.revokeAllSessions(existing.id, uow);
        }
        await repo.insertIdentity(trx, {
          userId: existing.id,
          provider,
          subject: id.subject,
          email: id.email,
        });
        return this.users.get(existing.id, trx);
      }
      // An address the provider has not verified is not recorded: it would block its real owner
      // from registering it.
      const user = await this.users.create(
        {
          email: id.emailVerified ? id.email : null,
          password: null,
          name: id.name ?? undefined,
          emailVerified: id.emailVerified,
        },
        uow,
      );
      await repo.insertIdentity(trx, { userId: user.id, provider, subject: id.subject, email: id.email });
      return user;
    });
  }
}
