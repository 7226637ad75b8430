// Short-lived access tokens: the console refreshes them (rotating the refresh token) and its
// chat socket, dropped by the server when its token expires, reconnects with a fresh one.
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../harness.js';
import { openBrowser } from './browser.js';

let t: TestApp;
let browser: Browser;
let page: Page;
let user: TestUser;
const consoleErrors: string[] = [];
/** The page's WebSockets, in the order opened, each with whether it has closed. */
const sockets: { closed: boolean }[] = [];

beforeAll(async () => {
  t = await createTestApp({ ACCESS_TOKEN_TTL: '4' });
  user = await createUser(t, 'public', { name: 'Pat' });
  ({ browser, page } = await openBrowser(consoleErrors));
  page.on('websocket', (ws) => {
    const s = { closed: false };
    sockets.push(s);
    ws.on('close', () => (s.closed = true));
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

it('keeps chatting across several access-token lifetimes', async () => {
  await page.goto(`${t.url}/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const log = page.getByRole('log', { name: 'Conversation' });
  await log.waitFor();
  await expect.poll(() => sockets.length).toBeGreaterThan(0);
  for (const round of [1, 2]) {
    // Past the token's lifetime the server drops the socket; the console opens a new one with a
    // fresh token. Both are waited for as they happen (the browser's WebSocket events).
    const opened = sockets.length;
    await expect.poll(() => sockets.slice(0, opened).every((s) => s.closed), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => sockets.length, { timeout: 15_000 }).toBeGreaterThan(opened);
    await page.getByLabel('Message').fill(`Still there? (${round})`);
    await expect
      .poll(() => page.getByRole('button', { name: 'Send' }).isEnabled(), { timeout: 15_000 })
      .toBe(true);
    await page.getByRole('button', { name: 'Send' }).click();
    // One reply a round, and the one shown is the one the server stored.
    await expect.poll(() => log.locator('.msg.assistant').count(), { timeout: 30_000 }).toBe(round);
    const replies = await t.deps.db
      .selectFrom('chat_messages')
      .select('text')
      .where('user_id', '=', user.id)
      .where('role', '=', 'assistant')
      .orderBy('id')
      .execute();
    expect(replies).toHaveLength(round);
    await expect
      .poll(() => log.locator('.msg.assistant').last().textContent())
      .toContain(replies.at(-1)!.text);
  }
  // And HTTP calls refresh too: the memory page loads with a fresh token.
  await page.getByRole('link', { name: 'Memory' }).click();
  await page.getByRole('list', { name: 'Memories' }).waitFor();
  expect(await page.getByRole('alert').count()).toBe(0);
  const result = await new AxeBuilder({ page }).analyze();
  expect(result.violations.filter((v) => v.impact === 'critical')).toEqual([]);
  expect(consoleErrors).toEqual([]);
});
