// External login's failures, every one of the API contract's list, against the real identity
// provider of oauth.fixtures.ts.
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../platform/security/secrets.js';
import { TestBrowser } from '../../../test/oidc-provider.js';
import {
  APP,
  PUBLIC,
  deliver,
  fragment,
  idp,
  interceptCallback,
  login,
  setupExternalLogin,
  startOnly,
  t,
  uniqueUser,
} from './oauth.fixtures.js';

setupExternalLogin();

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
