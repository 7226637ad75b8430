// External login against a real identity provider (oidc-provider on loopback), driven by a real
// HTTP client that follows redirects and keeps cookies: an OIDC discovery issuer and a plain
// OAuth 2.0 provider with explicit endpoints (the failures are in oauth.failures.test.ts).
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../platform/security/secrets.js';
import { OAuthService } from './oauth.service.js';
import { createUser } from '../../../test/harness.js';
import {
  APP,
  PUBLIC,
  deliver,
  fragment,
  idp,
  interceptCallback,
  login,
  setupExternalLogin,
  t,
  uniqueUser,
} from './oauth.fixtures.js';

setupExternalLogin();

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

  it('lists the configured providers by name only, publicly', async () => {
    const res = await t.api('GET', '/api/auth/providers');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ providers: [{ name: 'oidc' }, { name: 'plain' }, { name: 'down' }] });
    expect(res.text).not.toMatch(/secret|clientId|issuer|127\.0\.0\.1/i);
  });

  it('the OpenAPI document lists the external-login and account-email routes', async () => {
    const doc = await t.api('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    for (const path of [
      '/api/auth/{idp}',
      '/api/auth/{idp}/callback',
      '/api/auth/exchange',
      '/api/auth/providers',
      '/api/auth/verify-email',
      '/api/auth/request-password-reset',
      '/api/auth/reset-password',
    ])
      expect(Object.keys(doc.body.paths)).toContain(path);
  });
});
