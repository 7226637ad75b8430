// External login against a real identity provider (oidc-provider on loopback), driven by a real
// HTTP client that follows redirects and keeps cookies: an OIDC discovery issuer and a plain
// OAuth 2.0 provider with explicit endpoints, and every failure of the API contract's list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../platform/security/secrets.js';
import { OAuthService } from './oauth.service.js';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';
import { startOidcProvider, TestBrowser, type IdpUser, type TestIdp } from '../../../test/oidc-provider.js';

// The service's public and app URLs as a deployment would have them; the browser reaches the
// service through them (like a reverse proxy) and stops when sent to the app.
const PUBLIC = 'http://api.test';
const APP = 'http://app.test';

let idp: TestIdp;
let t: TestApp;
let seq = 0;

const uniqueUser = (over: Partial<IdpUser> = {}): IdpUser => {
  seq += 1;
  return {
    sub: `${9000 + seq}`,
    email: `ext${seq}-${Date.now()}@idp.test`,
    email_verified: true,
    name: `External ${seq}`,
    ...over,
  };
};

const fragment = (location: string) => new URLSearchParams(new URL(location).hash.slice(1));

/** A whole external login in a fresh browser; answers where the browser was sent back to. */
async function login(
  provider: string,
  who: IdpUser | 'deny',
  opts: { headers?: Record<string, string>; query?: string } = {},
) {
  idp.nextLogin = who;
  const browser = new TestBrowser({ [PUBLIC]: t.url });
  const location = await browser.follow(
    `${PUBLIC}/api/auth/${provider}${opts.query ?? ''}`,
    `${APP}/`,
    opts.headers,
  );
  return { location, browser, result: fragment(location) };
}

/** Runs a login up to the provider's redirect back to us, without delivering it. */
async function interceptCallback(provider: string, who: IdpUser) {
  idp.nextLogin = who;
  const browser = new TestBrowser({ [PUBLIC]: t.url });
  const callback = await browser.follow(
    `${PUBLIC}/api/auth/${provider}`,
    `${PUBLIC}/api/auth/${provider}/callback`,
  );
  return { browser, callback, params: new URL(callback).searchParams };
}

/** Starts a login and stops at the provider's authorisation URL. */
async function startOnly(provider: string) {
  const browser = new TestBrowser({ [PUBLIC]: t.url });
  const authUrl = await browser.follow(`${PUBLIC}/api/auth/${provider}`, idp.issuer);
  return { browser, authUrl: new URL(authUrl) };
}

/** Delivers a callback to the service and answers the app location it redirects to. */
async function deliver(browser: TestBrowser, callbackUrl: string, headers: Record<string, string> = {}) {
  const res = await browser.request(callbackUrl, { headers });
  expect(res.status).toBe(302);
  return res.headers.get('location')!;
}

beforeAll(async () => {
  idp = await startOidcProvider([
    {
      client_id: 'app-oidc',
      client_secret: 'oidc-secret-0123456789',
      redirect_uris: [`${PUBLIC}/api/auth/oidc/callback`],
    },
    {
      client_id: 'app-plain',
      client_secret: 'plain-secret-0123456789',
      redirect_uris: [`${PUBLIC}/api/auth/plain/callback`],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ]);
  t = await createTestApp({
    PUBLIC_URL: PUBLIC,
    APP_URL: APP,
    BLOCKED_COUNTRIES: 'XX,YY',
    COUNTRY_HEADER: 'CF-IPCountry',
    OAUTH_PROVIDERS: JSON.stringify([
      { name: 'oidc', issuer: idp.issuer, clientId: 'app-oidc', clientSecret: 'oidc-secret-0123456789' },
      {
        name: 'plain',
        authorizationUrl: `${idp.issuer}/auth`,
        tokenUrl: `${idp.issuer}/token`,
        userinfoUrl: `${idp.issuer}/api/user`,
        clientId: 'app-plain',
        clientSecret: 'plain-secret-0123456789',
        scopes: ['email', 'profile'],
        tokenAuthMethod: 'client_secret_post',
      },
      // Nothing listens there: discovery fails.
      { name: 'down', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' },
    ]),
  });
});

afterAll(async () => {
  await t?.close();
  await idp?.close();
});

describe('external login: OIDC discovery issuer', () => {
  it('signs a new user in: state, nonce and PKCE S256 out, one-time code back, tokens at exchange', async () => {
    const who = uniqueUser({ name: 'Ada External' });
    const { browser, location, result } = await login('oidc', who);
    expect(location.startsWith(`${APP}/auth/callback#code=`)).toBe(true);

    // The authorisation request carried state, nonce and an S256 challenge to our callback.
    const auth = new URL(browser.visited.find((u) => u.startsWith(`${idp.issuer}/auth?`))!);
    expect(auth.searchParams.get('redirect_uri')).toBe(`${PUBLIC}/api/auth/oidc/callback`);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(auth.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(auth.searchParams.get('scope')).toBe('openid email profile');
    const state = auth.searchParams.get('state')!;
    // No token in any URL: only the one-time code, in the fragment.
    expect(browser.visited.some((u) => /access_?token|refresh_?token/i.test(u))).toBe(false);
    // The state was stored hashed and is gone once used.
    expect(
      await t.deps.db
        .selectFrom('oauth_flows')
        .select('id')
        .where('state_hash', '=', sha256(state))
        .executeTakeFirst(),
    ).toBeUndefined();

    const exchanged = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({
      tokenType: 'Bearer',
      user: {
        email: who.email,
        name: 'Ada External',
        emailVerified: true,
        role: 'carbon',
        accountType: 'public',
      },
    });
    const profile = await t.api('GET', '/api/user/profile', { token: exchanged.body.accessToken });
    expect(profile.status).toBe(200);
    expect(profile.body.email).toBe(who.email);
    const refreshed = await t.api('POST', '/api/auth/refresh', {
      body: { refreshToken: exchanged.body.refreshToken },
    });
    expect(refreshed.status).toBe(200);

    // The one-time code works once.
    const again = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('unauthenticated');
  });

  it('finds the same account again by the provider subject, even after the address changed there', async () => {
    const who = uniqueUser();
    const first = await login('oidc', who);
    const a = await t.api('POST', '/api/auth/exchange', { body: { code: first.result.get('code') } });
    const second = await login('oidc', { ...who, email: `changed-${who.email}` });
    const b = await t.api('POST', '/api/auth/exchange', { body: { code: second.result.get('code') } });
    expect(b.status).toBe(200);
    expect(b.body.user.id).toBe(a.body.user.id);
  });

  it('two first logins of one provider account at once end in one account', async () => {
    const who = uniqueUser();
    const a = await interceptCallback('oidc', who);
    const b = await interceptCallback('oidc', who);
    const [la, lb] = await Promise.all([deliver(a.browser, a.callback), deliver(b.browser, b.callback)]);
    const codes = [fragment(la).get('code'), fragment(lb).get('code')];
    expect(codes.every(Boolean)).toBe(true);
    const users = await Promise.all(
      codes.map((code) => t.api('POST', '/api/auth/exchange', { body: { code } })),
    );
    expect(users.map((u) => u.status)).toEqual([200, 200]);
    expect(users[0]!.body.user.id).toBe(users[1]!.body.user.id);
  });

  it('passes the client type through to the issued session', async () => {
    const { result } = await login('oidc', uniqueUser(), { query: '?clientType=mobile' });
    const ex = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(ex.status).toBe(200);
    const row = await t.deps.db
      .selectFrom('refresh_tokens')
      .select('client_type')
      .where('token_hash', '=', sha256(ex.body.refreshToken))
      .executeTakeFirstOrThrow();
    expect(row.client_type).toBe('mobile');
  });

  it('does not record an address the provider has not verified', async () => {
    const who = uniqueUser({ email_verified: false });
    const { result } = await login('oidc', who);
    const ex = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(ex.status).toBe(200);
    expect(ex.body.user).toMatchObject({ email: null, emailVerified: false, name: who.name });
  });
});

describe('external login: plain OAuth 2.0 provider with explicit endpoints', () => {
  it('signs in through the provider user API, with state and PKCE but no nonce', async () => {
    const who = uniqueUser({ name: 'Plain Person' });
    const { browser, result } = await login('plain', who);
    const auth = new URL(browser.visited.find((u) => u.startsWith(`${idp.issuer}/auth?`))!);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('state')).toBeTruthy();
    expect(auth.searchParams.has('nonce')).toBe(false);
    expect(auth.searchParams.get('scope')).toBe('email profile');

    const ex = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(ex.status).toBe(200);
    expect(ex.body.user).toMatchObject({ email: who.email, emailVerified: true, name: 'Plain Person' });
    // The numeric `id` of the user API is the subject.
    const identity = await t.deps.db
      .selectFrom('user_identities')
      .select(['provider', 'subject'])
      .where('user_id', '=', ex.body.user.id)
      .executeTakeFirstOrThrow();
    expect(identity).toEqual({ provider: 'plain', subject: who.sub });

    // The same person through another provider, with the same verified address: one account.
    const viaOidc = await login('oidc', { ...who, sub: `oidc-${who.sub}` });
    const ex2 = await t.api('POST', '/api/auth/exchange', { body: { code: viaOidc.result.get('code') } });
    expect(ex2.body.user.id).toBe(ex.body.user.id);
  });
});

describe('external login failures', () => {
  it('an unknown provider is 404, at the start and at the callback', async () => {
    for (const path of ['/api/auth/nope', '/api/auth/nope/callback?code=x&state=y']) {
      const res = await t.api('GET', path);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('a provider that cannot be reached comes back as provider_error', async () => {
    const browser = new TestBrowser({ [PUBLIC]: t.url });
    const res = await browser.request(`${PUBLIC}/api/auth/down`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${APP}/auth/callback#error=provider_error`);
  });

  it('a wrong or missing state is refused', async () => {
    const browser = new TestBrowser({ [PUBLIC]: t.url });
    expect(
      fragment(await deliver(browser, `${PUBLIC}/api/auth/oidc/callback?code=abc&state=forged`)).get('error'),
    ).toBe('invalid_state');
    expect(fragment(await deliver(browser, `${PUBLIC}/api/auth/oidc/callback?code=abc`)).get('error')).toBe(
      'invalid_state',
    );
    // A real state of another provider does not fit this one.
    const { authUrl } = await startOnly('plain');
    const location = await deliver(
      browser,
      `${PUBLIC}/api/auth/oidc/callback?code=abc&state=${authUrl.searchParams.get('state')}`,
    );
    expect(location).toBe(`${APP}/auth/callback#error=invalid_state`);
  });

  it('a callback delivered to another browser is refused (login CSRF), and the flow is spent', async () => {
    const start = await new TestBrowser({ [PUBLIC]: t.url }).request(`${PUBLIC}/api/auth/oidc`);
    expect(start.headers.get('set-cookie')).toMatch(
      /^oauth_[0-9a-f]{16}=[\w-]+; Max-Age=600; Path=\/api\/auth\/oidc\/callback; HttpOnly; SameSite=Lax$/,
    );

    const { browser, callback } = await interceptCallback('oidc', uniqueUser());
    const victim = new TestBrowser({ [PUBLIC]: t.url });
    expect(fragment(await deliver(victim, callback)).get('error')).toBe('invalid_state');
    expect(fragment(await deliver(browser, callback)).get('error')).toBe('invalid_state');
  });

  it('a replayed callback (same state) is refused', async () => {
    const { browser, callback } = await interceptCallback('oidc', uniqueUser());
    expect(fragment(await deliver(browser, callback)).get('code')).toBeTruthy();
    expect(fragment(await deliver(browser, callback)).get('error')).toBe('invalid_state');
  });

  it('an expired state is refused', async () => {
    const { browser, callback, params } = await interceptCallback('oidc', uniqueUser());
    await t.deps.db
      .updateTable('oauth_flows')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('state_hash', '=', sha256(params.get('state')!))
      .execute();
    expect(fragment(await deliver(browser, callback)).get('error')).toBe('invalid_state');
  });

  it('a replayed authorisation code is refused by the provider: provider_error', async () => {
    const { browser, callback, params } = await interceptCallback('oidc', uniqueUser());
    expect(fragment(await deliver(browser, callback)).get('code')).toBeTruthy();
    // A new login of ours (fresh state and verifier) fed the spent code.
    const next = await startOnly('oidc');
    const replay = new URL(`${PUBLIC}/api/auth/oidc/callback`);
    replay.searchParams.set('code', params.get('code')!);
    replay.searchParams.set('state', next.authUrl.searchParams.get('state')!);
    replay.searchParams.set('iss', params.get('iss') ?? idp.issuer);
    expect(fragment(await deliver(next.browser, replay.href)).get('error')).toBe('provider_error');
  });

  it('a code is worthless without its PKCE verifier', async () => {
    const { browser, callback, params } = await interceptCallback('oidc', uniqueUser());
    // Whoever intercepts the redirect cannot redeem the code with the client credentials alone.
    const stolen = await fetch(`${idp.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('app-oidc:oidc-secret-0123456789').toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: params.get('code')!,
        redirect_uri: `${PUBLIC}/api/auth/oidc/callback`,
      }),
    });
    expect(stolen.status).toBe(400);
    expect(((await stolen.json()) as { error: string }).error).toMatch(/invalid_(grant|request)/);
    // And our own exchange with a verifier that does not match the challenge fails too.
    await t.deps.db
      .updateTable('oauth_flows')
      .set({ code_verifier: 'x'.repeat(64) })
      .where('state_hash', '=', sha256(params.get('state')!))
      .execute();
    expect(fragment(await deliver(browser, callback)).get('error')).toBe('provider_error');
  });

  it('the user refusing at the provider comes back as access_denied', async () => {
    const { location } = await login('oidc', 'deny');
    expect(location).toBe(`${APP}/auth/callback#error=access_denied`);
  });

  it('any other provider error response comes back as provider_error', async () => {
    const { browser, authUrl } = await startOnly('oidc');
    const state = authUrl.searchParams.get('state')!;
    const location = await deliver(
      browser,
      `${PUBLIC}/api/auth/oidc/callback?error=temporarily_unavailable&state=${state}`,
    );
    expect(location).toBe(`${APP}/auth/callback#error=provider_error`);
  });

  it('blocks the configured regions, from the trusted proxy header, at the start and the callback', async () => {
    const start = new TestBrowser({ [PUBLIC]: t.url });
    const blocked = await start.request(`${PUBLIC}/api/auth/oidc`, { headers: { 'cf-ipcountry': 'xx' } });
    expect(blocked.status).toBe(302);
    expect(blocked.headers.get('location')).toBe(`${APP}/auth/callback#error=region_blocked`);

    const { browser, callback } = await interceptCallback('oidc', uniqueUser());
    expect(await deliver(browser, callback, { 'CF-IPCountry': 'YY' })).toBe(
      `${APP}/auth/callback#error=region_blocked`,
    );

    const allowed = await start.request(`${PUBLIC}/api/auth/oidc`, { headers: { 'cf-ipcountry': 'DE' } });
    expect(allowed.headers.get('location')!.startsWith(`${idp.issuer}/auth?`)).toBe(true);
  });

  it('exchange: bad body 400, unknown or expired code 401', async () => {
    expect((await t.api('POST', '/api/auth/exchange', { body: {} })).status).toBe(400);
    expect((await t.api('POST', '/api/auth/exchange', { body: { code: 'made-up' } })).status).toBe(401);
    const { result } = await login('oidc', uniqueUser());
    const code = result.get('code')!;
    await t.deps.db
      .updateTable('oauth_login_codes')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('code_hash', '=', sha256(code))
      .execute();
    const expired = await t.api('POST', '/api/auth/exchange', { body: { code } });
    expect(expired.status).toBe(401);
  });
});

describe('external login and an existing password account', () => {
  it('an address the provider has not verified is not linked: access_denied', async () => {
    const local = await createUser(t, 'public');
    const { location } = await login('oidc', uniqueUser({ email: local.email, email_verified: false }));
    expect(location).toBe(`${APP}/auth/callback#error=access_denied`);
    const links = await t.deps.db
      .selectFrom('user_identities')
      .select('id')
      .where('user_id', '=', local.id)
      .execute();
    expect(links).toHaveLength(0);
    // The account is untouched.
    expect(
      (await t.api('POST', '/api/auth/login', { body: { email: local.email, password: local.password } }))
        .status,
    ).toBe(200);
  });

  it('a verified address links to a verified account, which keeps its password', async () => {
    const local = await createUser(t, 'public');
    await t.deps.db.updateTable('users').set({ email_verified: true }).where('id', '=', local.id).execute();
    const { result } = await login('oidc', uniqueUser({ email: local.email.toUpperCase() }));
    const ex = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(ex.status).toBe(200);
    expect(ex.body.user.id).toBe(local.id);
    expect(
      (await t.api('POST', '/api/auth/login', { body: { email: local.email, password: local.password } }))
        .status,
    ).toBe(200);
    expect(
      (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: local.refreshToken } })).status,
    ).toBe(200);
  });

  it("a verified address takes over an account whose registrant never verified it: the registrant's password and sessions end", async () => {
    const local = await createUser(t, 'public');
    const { result } = await login('oidc', uniqueUser({ email: local.email }));
    const ex = await t.api('POST', '/api/auth/exchange', { body: { code: result.get('code') } });
    expect(ex.status).toBe(200);
    expect(ex.body.user).toMatchObject({ id: local.id, emailVerified: true });
    expect(
      (await t.api('POST', '/api/auth/login', { body: { email: local.email, password: local.password } }))
        .status,
    ).toBe(401);
    expect(
      (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: local.refreshToken } })).status,
    ).toBe(401);
  });
});

describe('provider configuration', () => {
  const base = {
    clientId: 'c',
    clientSecret: 's',
    scopes: ['openid'],
    tokenAuthMethod: 'client_secret_basic' as const,
  };
  const make = (providers: ConstructorParameters<typeof OAuthService>[4]['providers']) =>
    new OAuthService(t.deps.db, t.deps.services.users, t.deps.services.auth, t.deps.log, {
      providers,
      publicUrl: PUBLIC,
      appUrl: APP,
      blockedCountries: [],
      stateTtlSeconds: 600,
      loginCodeTtlSeconds: 60,
      providerTimeoutSeconds: 5,
    });

  it('provider URLs must be https, except loopback hosts', () => {
    expect(() => make([{ ...base, name: 'a', issuer: 'http://idp.example.com' }])).toThrow(/https/);
    expect(() =>
      make([
        {
          ...base,
          name: 'b',
          authorizationUrl: 'https://idp.example.com/a',
          tokenUrl: 'http://idp.example.com/t',
          userinfoUrl: 'https://idp.example.com/u',
        },
      ]),
    ).toThrow(/https/);
    expect(() => make([{ ...base, name: 'c', issuer: 'https://idp.example.com' }])).not.toThrow();
    expect(() =>
      make([
        { ...base, name: 'd', issuer: 'http://localhost:8080' },
        { ...base, name: 'e', issuer: 'http://[::1]:8080' },
      ]),
    ).not.toThrow();
  });

  it('a provider name is listed once', () => {
    expect(() =>
      make([
        { ...base, name: 'a', issuer: 'https://x.example' },
        { ...base, name: 'a', issuer: 'https://y.example' },
      ]),
    ).toThrow(/twice/);
  });

  it('the OpenAPI document lists the external-login and account-email routes', async () => {
    const doc = await t.api('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/api/auth/{idp}',
      '/api/auth/{idp}/callback',
      '/api/auth/exchange',
      '/api/auth/verify-email',
      '/api/auth/request-password-reset',
      '/api/auth/reset-password',
    ])
      expect(Object.keys(doc.body.paths)).toContain(path);
  });
});
