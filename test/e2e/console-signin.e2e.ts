// Signing in to the console as a person does it, in a real browser against the real server:
// external sign-in through a real identity provider on loopback (the #code= callback, a refused
// login's alert), and the Admin link for an admin listed in ADMIN_USER_IDS. Each page is checked
// by axe-core (no serious or critical finding) with no console error, and screenshotted at
// 1280×800 and 390 px wide. The server, provider and browser are in console-idp-fixtures.ts.
import { describe, expect, it } from 'vitest';
import {
  LISTED,
  accessible,
  base,
  idp,
  onPhone,
  page,
  signIn,
  useConsoleApp,
} from './console-idp-fixtures.js';

useConsoleApp();

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
}

describe('signing in', () => {
  it('offers the configured external provider and signs in through it (#code= callback)', async () => {
    await page.goto(`${base}/`);
    const external = page.getByRole('navigation', { name: 'External sign-in' });
    const link = external.getByRole('link', { name: 'Sign in with Oidc' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe('/api/auth/oidc');
    await accessible('signin-external');
    await onPhone('signin-external', () => link.waitFor());

    idp.nextLogin = {
      sub: 'ext-42',
      email: 'erin.external@idp.test',
      email_verified: true,
      name: 'Erin External',
    };
    await link.click();
    // Provider, callback, then the console trades the one-time code and opens the chat.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Chat' }).waitFor();
    await page.locator('.who').getByText('Erin External').waitFor();
    expect(page.url()).toBe(`${base}/chat`);
    expect(await page.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await signOut();
  });

  it('a refused external login lands on the callback page with an alert', async () => {
    // A fresh provider session (the last login's would sign in again without asking).
    await page.context().clearCookies();
    await page.goto(`${base}/`);
    idp.nextLogin = 'deny';
    await page.getByRole('link', { name: 'Sign in with Oidc' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/access_denied/);
    expect(new URL(page.url()).hash).toBe('');
    await accessible('auth-callback-error');
  });

  it('shows the Admin link to an admin listed in ADMIN_USER_IDS (role carbon)', async () => {
    await signIn(LISTED.email, LISTED.password);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('table', { name: 'Users' }).getByText(LISTED.email).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await signOut();
  });
});
