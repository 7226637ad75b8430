// The external-login test bed shared by oauth.test.ts and oauth.failures.test.ts: a real
// identity provider (oidc-provider on loopback) with two clients, the service configured with an
// OIDC discovery issuer, a plain OAuth 2.0 provider and one that is down, and a browser that
// follows redirects and keeps cookies.
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { startOidcProvider, TestBrowser, type IdpUser, type TestIdp } from '../../../test/oidc-provider.js';

// The service's public and app URLs as a deployment would have them; the browser reaches the
// service through them (like a reverse proxy) and stops when sent to the app.
export const PUBLIC = 'http://api.test';
export const APP = 'http://app.test';

// Live bindings: the test files importing them see the values set in beforeAll.
export let idp: TestIdp;
export let t: TestApp;
let seq = 0;

export const uniqueUser = (over: Partial<IdpUser> = {}): IdpUser => {
  seq += 1;
  return {
    sub: `${9000 + seq}`,
    email: `ext${seq}-${Date.now()}@idp.test`,
    email_verified: true,
    name: `External ${seq}`,
    ...over,
  };
};

export const fragment = (location: string) => new URLSearchParams(new URL(location).hash.slice(1));

/** A whole external login in a fresh browser; answers where the browser was sent back to. */
export async function login(
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
export async function interceptCallback(provider: string, who: IdpUser) {
  idp.nextLogin = who;
  const browser = new TestBrowser({ [PUBLIC]: t.url });
  const callback = await browser.follow(
    `${PUBLIC}/api/auth/${provider}`,
    `${PUBLIC}/api/auth/${provider}/callback`,
  );
  return { browser, callback, params: new URL(callback).searchParams };
}

/** Starts a login and stops at the provider's authorisation URL. */
export async function startOnly(provider: string) {
  const browser = new TestBrowser({ [PUBLIC]: t.url });
  const authUrl = await browser.follow(`${PUBLIC}/api/auth/${provider}`, idp.issuer);
  return { browser, authUrl: new URL(authUrl) };
}

/** Delivers a callback to the service and answers the app location it redirects to. */
export async function deliver(
  browser: TestBrowser,
  callbackUrl: string,
  headers: Record<string, string> = {},
) {
  const res = await browser.request(callbackUrl, { headers });
  expect(res.status).toBe(302);
  return res.headers.get('location')!;
}

/** Starts the identity provider and the service for the calling test file. */
export function setupExternalLogin(): void {
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
}
