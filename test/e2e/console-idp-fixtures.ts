// What the console's browser tests of console-signin.e2e.ts and console-admin.e2e.ts share: the
// real server behind its PUBLIC_URL, a port fixed before the app starts and piped to the app's own
// (the identity provider must know the callback URL), with external sign-in through a real
// identity provider on loopback, an admin, and an account that is admin only because its id is
// listed in ADMIN_USER_IDS; Debian's chromium with one page; and the checks of a page: axe-core
// (no serious or critical finding) with no console error, screenshotted at 1280×800 and 390 px
// wide into $E2E_SCREENSHOTS (default: a temp directory). A test file calls `useConsoleApp()`
// once; the bindings below are set before its tests run.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { hashPassword } from '../../src/platform/security/secrets.js';
import { createTestApp, createUser, type TestApp, type TestUser } from '../harness.js';
import { startOidcProvider, type TestIdp } from '../oidc-provider.js';
import { openBrowser, expectAccessible } from './browser.js';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'e2e-more-shots-'));
mkdirSync(shots, { recursive: true });

const LISTED_ID = 900001;
export const LISTED = { email: 'listed.admin@example.test', password: 'a listed admin password' };

export let t: TestApp;
export let idp: TestIdp;
let proxy: Server;
/** Where the browser reaches the service: PUBLIC_URL, a port fixed before the app starts (the
 * identity provider must know the callback URL), piped to the app's own port. */
export let base: string;
let browser: Browser;
export let page: Page;
export let admin: TestUser;
export const consoleErrors: string[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The app, the identity provider, the proxy, the users and the browser of one test file, made
 * before its tests and closed after. */
export function useConsoleApp(): void {
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider([
      {
        client_id: 'console-oidc',
        client_secret: 'console-secret-0123456789',
        redirect_uris: [`${base}/api/auth/oidc/callback`],
      },
    ]);
    t = await createTestApp({
      PUBLIC_URL: base,
      APP_URL: base,
      ADMIN_USER_IDS: String(LISTED_ID),
      OAUTH_PROVIDERS: JSON.stringify([
        {
          name: 'oidc',
          issuer: idp.issuer,
          clientId: 'console-oidc',
          clientSecret: 'console-secret-0123456789',
        },
      ]),
    });
    const target = Number(new URL(t.url).port);
    proxy = createServer((socket) => {
      const upstream = connect(target, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));

    admin = await createUser(t, 'cso', { name: 'Ada Admin' });
    // An account that is admin only because its id is listed in ADMIN_USER_IDS.
    await sql`insert into users (id, email, password_hash, name, role, account_type) overriding system value
      values (${LISTED_ID}, ${LISTED.email}, ${await hashPassword(LISTED.password)}, 'Lee Listed', 'carbon', 'public')`.execute(
      t.deps.db,
    );

    ({ browser, page } = await openBrowser(consoleErrors));
  });

  beforeEach(() => {
    consoleErrors.length = 0;
  });

  // A failed test leaves a picture of where it stopped.
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail')
      await page?.screenshot({
        path: join(shots, `failed-${ctx.task.name.slice(0, 40)}.png`),
        fullPage: true,
      });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await t?.close();
    await idp?.close();
  });
}

/** Screenshot, axe-core (no serious or critical finding), no console error. */
export const accessible = (name: string) => expectAccessible(page, consoleErrors, shots, name);

/** The same page at a phone's width: accessible, and nothing wider than the screen. */
export async function onPhone(name: string, ready: () => Promise<unknown>) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await ready();
    await accessible(`${name}-phone`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), name).toBeLessThanOrEqual(
      390,
    );
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

export async function signIn(email: string, password: string) {
  await page.goto(`${base}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Chat' }).waitFor();
}
