import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

// Debian's chromium, as playwright-core launches it here (the background-networking flags keep
// it from dialling out, which this machine's closed network refuses).
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Records a page's console errors and uncaught errors in `errors`, each with the page's URL (and
 * a console message's source, the failed request's URL for a failed request): a test expects none. */
export function collectErrors(page: Page, errors: string[]): Page {
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return page;
}

/** Debian's chromium with one page at 1280×800, its errors recorded in `errors`. */
export async function openBrowser(errors: string[]): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  return { browser, page: collectErrors(await context.newPage(), errors) };
}

/** A screenshot of the page as `<dir>/<name>.png` (to look at), no serious or critical axe-core
 * finding, and no console error so far. */
export async function expectAccessible(page: Page, errors: string[], dir: string, name: string) {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  expect(errors).toEqual([]);
}

/** Takes out of `errors` the one the browser logs for a request the test made fail on purpose: a
 * `status` answer from a URL containing `path`. Fails when it is missing or there are more; every
 * other error stays for `expectAccessible`. */
export function expectFailedRequest(errors: string[], status: number, path: string) {
  const expected = errors.filter(
    (e) => e.includes(`the server responded with a status of ${status} `) && e.includes(`${path}`),
  );
  expect(expected, `the ${status} from ${path} among: ${errors.join('\n')}`).toHaveLength(1);
  errors.splice(errors.indexOf(expected[0]!), 1);
}
