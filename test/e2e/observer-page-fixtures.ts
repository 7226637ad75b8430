// What the Observer page's browser tests share (observer.e2e.ts, observer-owner.e2e.ts): the real
// server with an admin's observers (Coast watch: two Level-5 instances under it, a handful of
// events; Archive: 10,000 events), Debian's chromium with one page, the console errors (none
// recorded when a test starts), and the check of a page: axe-core (no serious or critical
// finding), no console error, a screenshot into $E2E_SCREENSHOTS (default: a temp directory). A
// test file calls `useObserverApp()` once; the bindings below are set before its tests run.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../harness.js';
import { fixtures, type Fixtures } from '../observer-fixtures.js';
import { openBrowser, expectAccessible } from './browser.js';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'e2e-shots-'));
mkdirSync(shots, { recursive: true });

export let t: TestApp;
export let browser: Browser;
export let page: Page;
export let admin: TestUser;
export let f: Fixtures;
/** Coast watch: two Level-5 instances under it, a handful of events. */
export let harbour: { id: number; name: string };
export let quay: { id: number; name: string };
export let lighthouse: { id: number; name: string };
/** Archive: 10,000 events. */
export let archive: { id: number; name: string };
export const consoleErrors: string[] = [];

export async function ingest(eventType: string, eventText: string, instanceId: number) {
  const r = await t.api('POST', '/api/sync/ingest-event', {
    token: admin.accessToken,
    body: { userId: admin.id, eventType, eventText, metadata: { instanceId } },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: number; timelineAt: string };
}

/** The app, the admin's observers and the browser of one test file, made before its tests and
 * closed after. */
export function useObserverApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t, 'cso', { name: 'Ada Admin' });
    f = fixtures(t, () => admin);
    harbour = await f.instance({ name: 'Coast watch', level: 8, source: 'portal', userId: admin.id });
    quay = await f.instance({
      name: 'Quay shard',
      level: 5,
      source: 'game_client',
      parentInstanceId: harbour.id,
      userId: admin.id,
    });
    lighthouse = await f.instance({
      name: 'Lighthouse shard',
      level: 5,
      source: 'portal',
      parentInstanceId: harbour.id,
    });
    await ingest('quest_started', 'The harbour lights came on', quay.id);
    await ingest('trade', 'Sold three lanterns', lighthouse.id);
    await ingest('diary_entry', 'Dear diary: the harbour was quiet', quay.id);
    await ingest('trade', 'Bought rope at the quay', quay.id);
    archive = await f.instance({ name: 'Archive', level: 8, source: 'portal' });
    await f.bulk(10_000, { observerId: archive.id, text: (i) => `Archived record ${i + 1}` });

    ({ browser, page } = await openBrowser(consoleErrors));
  });

  beforeEach(() => {
    consoleErrors.length = 0;
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
}

export const accessible = (name: string, target: Page = page) =>
  expectAccessible(target, consoleErrors, shots, name);
