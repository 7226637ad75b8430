// The Observer page as a person uses it, in a real browser against the real server: the unified
// timeline (filters, search, both orders, cursor pages, live events), 10,000 events in a
// virtualised feed, playback, the state at a time (5D), Reflect and Run cycle, summary figures
// updated by `summary_update`, reflections made elsewhere; an owner who is no admin (their own
// observers only); axe-core (no serious or critical finding) and no console error, at
// 1280×800 and 390 px wide. Screenshots go to $E2E_SCREENSHOTS (default: a temp directory).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../harness.js';
import { fixtures, type Fixtures } from '../observer-fixtures.js';
import { openBrowser, expectAccessible, collectErrors, expectFailedRequest } from './browser.js';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'e2e-shots-'));
mkdirSync(shots, { recursive: true });

let t: TestApp;
let browser: Browser;
let page: Page;
let admin: TestUser;
let f: Fixtures;
/** Coast watch: two Level-5 instances under it, a handful of events. */
let harbour: { id: number; name: string };
let quay: { id: number; name: string };
let lighthouse: { id: number; name: string };
/** Archive: 10,000 events. */
let archive: { id: number; name: string };
const consoleErrors: string[] = [];

async function ingest(eventType: string, eventText: string, instanceId: number) {
  const r = await t.api('POST', '/api/sync/ingest-event', {
    token: admin.accessToken,
    body: { userId: admin.id, eventType, eventText, metadata: { instanceId } },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: number; timelineAt: string };
}

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
  await page.goto(`${t.url}/`);
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Observer' }).click();
  await page.getByRole('combobox', { name: 'Observer', exact: true }).selectOption(String(harbour.id));
  await status().getByText('Live').waitFor();
});

beforeEach(() => {
  consoleErrors.length = 0;
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const accessible = (name: string, target: Page = page) =>
  expectAccessible(target, consoleErrors, shots, name);

const feed = () => page.getByRole('feed', { name: 'Timeline' });
const rows = () => feed().locator('article.event');
/** The timeline's status line: "Live · 5 of 5 events · all loaded". */
const status = () => page.getByRole('region', { name: 'Timeline' }).getByRole('status');
const texts = () => rows().locator('.event-text').allTextContents();
const figure = (name: string | RegExp, scope = page.locator('body')) =>
  scope.locator('dt', { hasText: name }).locator('xpath=following-sibling::dd');
/** A time as a `datetime-local` value (the browser's local time, to the second). */
function local(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

describe('the Observer page', () => {
  it('shows the unified timeline newest first, filters it, searches it, and grows live', async () => {
    // The three instance registrations and the four events, newest first.
    await expect
      .poll(texts)
      .toEqual([
        'Bought rope at the quay',
        'Dear diary: the harbour was quiet',
        'Sold three lanterns',
        'The harbour lights came on',
        expect.stringContaining('Lighthouse shard'),
        expect.stringContaining('Quay shard'),
        expect.stringContaining('Coast watch'),
      ]);
    await status().getByText('7 of 7 events · all loaded').waitFor();

    // Event type.
    await page.getByLabel('Event type', { exact: true }).selectOption('trade');
    await expect.poll(texts).toEqual(['Bought rope at the quay', 'Sold three lanterns']);
    // Instance, with the type.
    await page.getByLabel('Instance', { exact: true }).selectOption({ label: `Quay shard (#${quay.id})` });
    await expect.poll(texts).toEqual(['Bought rope at the quay']);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => rows().count()).toBe(7);

    // Full text: every word, any case, whole words.
    const search = page.getByRole('searchbox', { name: 'Search timeline' });
    await search.fill('HARBOUR quiet');
    await expect.poll(texts).toEqual(['Dear diary: the harbour was quiet']);
    await search.fill('harbour');
    await expect.poll(texts).toEqual(['Dear diary: the harbour was quiet', 'The harbour lights came on']);
    // A live event that matches the search joins the view; one that does not, does not.
    await ingest('note', 'Fog over the harbour', lighthouse.id);
    await ingest('note', 'Fog over the hills', lighthouse.id);
    await expect
      .poll(texts)
      .toEqual(['Fog over the harbour', 'Dear diary: the harbour was quiet', 'The harbour lights came on']);
    await search.fill('');
    await expect.poll(() => rows().count()).toBe(9);
    await expect.poll(() => texts().then((x) => x[0])).toBe('Fog over the hills');

    // Time range: from a minute ahead, nothing; from after to, the server's refusal.
    const ahead = Date.now() + 60_000;
    await page.getByLabel('From', { exact: true }).fill(local(ahead));
    await feed().getByText('No events.').waitFor();
    await ingest('note', 'Too early for the range', quay.id);
    await status().getByText('0 of 0 events').waitFor();
    await page.getByLabel('To', { exact: true }).fill(local(ahead - 3_600_000));
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/from must be before to/i);
    expectFailedRequest(consoleErrors, 400, '/timeline'); // the answer shown
    await page.getByLabel('From', { exact: true }).fill(local(Date.now() - 3_600_000));
    await page.getByLabel('To', { exact: true }).fill(local(ahead));
    await expect.poll(() => rows().count()).toBe(10);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('button', { name: 'Clear filters' }).click();

    // Oldest first: the observer's own registration leads.
    await page.getByLabel('Order', { exact: true }).selectOption({ label: 'Oldest first' });
    await expect.poll(() => texts().then((x) => x[0])).toContain('Coast watch');
    await ingest('note', 'The last word', quay.id);
    await expect.poll(() => texts().then((x) => x[x.length - 1])).toBe('The last word');
    await page.getByLabel('Order', { exact: true }).selectOption({ label: 'Newest first' });
    await expect.poll(() => texts().then((x) => x[0])).toBe('The last word');
    await accessible('observer-timeline');
  });

  it('summary figures follow summary_update; Reflect and Run cycle answer, a refusal is an alert', async () => {
    const summary = page.getByRole('region', { name: 'Summary' });
    await expect.poll(() => figure(/^Cycles$/, summary).textContent()).toBe('0');
    // A cycle run elsewhere: the figures change with no reload.
    const r = await t.api('POST', `/api/observer/observer/${harbour.id}/cycle`, {
      token: admin.accessToken,
      body: {},
    });
    expect(r.status).toBe(200);
    await expect.poll(() => figure(/^Cycles$/, summary).textContent()).toBe('1');
    await expect.poll(() => figure(/^Last cycle$/, summary).textContent()).toBe('completed');

    // Its reflection, made elsewhere, shows in the panel (from `reflection_generated`).
    const panel = page.getByRole('region', { name: 'Reflection and cycle' });
    const elsewhere = r.body.reflection as { text: string; eventCount: number };
    expect(elsewhere).toBeTruthy();
    await expect
      .poll(() => panel.getByRole('status').textContent())
      .toMatch(new RegExp(`^Reflection on ${elsewhere.eventCount} events.* · made elsewhere at `));
    await expect.poll(() => panel.locator('.reflection').textContent()).toBe(elsewhere.text);
    await panel.getByLabel('Window (hours)', { exact: true }).fill('1000');
    await panel.getByRole('button', { name: 'Reflect' }).click();
    await expect.poll(() => panel.getByRole('alert').textContent()).toMatch(/720/);
    expectFailedRequest(consoleErrors, 400, '/reflection'); // the refusal shown

    await panel.getByLabel('Window (hours)', { exact: true }).fill('24');
    // The panel still shows the reflection made elsewhere: wait for this one's own answer.
    const answered = page.waitForResponse(
      (res) => res.url().endsWith('/reflection') && res.request().method() === 'POST',
    );
    await panel.getByRole('button', { name: 'Reflect' }).click();
    const mine = ((await (await answered).json()) as { reflection: { text: string } }).reflection;
    await expect.poll(() => panel.locator('.reflection').textContent()).toBe(mine.text);
    await panel
      .getByRole('status')
      .getByText(/Reflection on \d+ events/)
      .waitFor();
    expect(await panel.getByRole('alert').count()).toBe(0);
    // The reflection is a timeline event too, live; its live copy is not shown as made elsewhere.
    await expect.poll(() => feed().getByText('reflection_generated').count()).toBeGreaterThanOrEqual(2);
    expect(await panel.getByRole('status').textContent()).not.toContain('made elsewhere');

    await panel.getByRole('button', { name: 'Run cycle' }).click();
    await panel.getByRole('status').getByText('Cycle completed').waitFor();
    const steps = panel.getByRole('list', { name: 'Cycle steps' }).getByRole('listitem');
    await expect
      .poll(() => steps.allTextContents())
      .toEqual([
        expect.stringMatching(/^ok gather/),
        expect.stringMatching(/^ok reflect/),
        expect.stringMatching(/^ok store/),
        expect.stringMatching(/^ok meta_state/),
      ]);
    await expect.poll(() => figure(/^Cycles$/, summary).textContent()).toBe('2');
    await accessible('observer-actions');
  });

  it('moves through time: the slider shows the state as of then', async () => {
    // The lighthouse goes dark now: the latest state has it inactive.
    const off = await t.api('PATCH', `/api/admin/instances/${lighthouse.id}`, {
      token: admin.accessToken,
      body: { isActive: false },
    });
    expect(off.status, off.text).toBe(200);
    const region = page.getByRole('region', { name: 'State at a time' });
    const instancesThen = region.getByRole('list', { name: 'Instances at that time' });
    const total = async () => {
      const r = await t.api('GET', `/api/observer/observer/${harbour.id}/5d-navigation/range`, {
        token: admin.accessToken,
      });
      return String(r.body.eventCount);
    };
    // At the right end it follows the live timeline.
    await expect
      .poll(async () => [await figure('Events by then', region).textContent(), await total()])
      .toSatisfy(([shown, all]) => shown === all);
    await instancesThen.getByText(/Lighthouse shard.*inactive/).waitFor();
    await expect.poll(() => figure('Instances then', region).textContent()).toBe('2');
    await expect.poll(() => figure('Active then', region).textContent()).toBe('1');

    // Home on the slider (the keyboard): the first event's time, the observer's registration,
    // before any instance below it.
    const slider = region.getByRole('slider', { name: 'State at' });
    await slider.focus();
    await page.keyboard.press('Home');
    await expect.poll(() => figure('Events by then', region).textContent()).toBe('1');
    await expect.poll(() => figure('Instances then', region).textContent()).toBe('0');
    await expect
      .poll(() => region.getByRole('list', { name: 'Newest events at that time' }).textContent())
      .toContain('Coast watch');
    // Halfway: both instances, the lighthouse still active.
    await slider.fill('500');
    await expect.poll(() => instancesThen.textContent()).toMatch(/Lighthouse shard.*\bactive\b/);
    await expect.poll(() => figure('Active then', region).textContent()).toBe('2');
    // End: now again.
    await slider.focus();
    await page.keyboard.press('End');
    await expect.poll(() => figure('Active then', region).textContent()).toBe('1');
    await accessible('observer-state');
  });

  it('plays back the loaded range at a chosen speed', async () => {
    for (const s of ['1x', '2x', '5x', '10x'])
      await page.getByRole('button', { name: s, exact: true }).waitFor();
    await page.getByRole('button', { name: '5x', exact: true }).click();
    expect(await page.getByRole('button', { name: '5x', exact: true }).getAttribute('aria-pressed')).toBe(
      'true',
    );
    // From the start of the range: only the first event shows.
    await page.getByLabel('Playback position', { exact: true }).fill('0');
    await expect.poll(() => rows().count()).toBe(1);
    await page.getByRole('button', { name: '10x', exact: true }).click();
    await page.getByRole('button', { name: 'Play', exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
    // The clock moves the position on; the range is seconds long, so it ends by itself.
    await page.getByRole('button', { name: 'Play', exact: true }).waitFor({ timeout: 30_000 });
    const all = await page.getByRole('region', { name: 'Timeline' }).getByRole('status').textContent();
    const [, shown, of] = /(\d+) of (\d+) events/.exec(all ?? '')!;
    expect(shown).toBe(of);
    await page.getByRole('button', { name: 'Show all' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Show all' }).count()).toBe(0);
  });

  // Fifty pages one after the other: a generous failsafe for a busy machine, not a timing claim.
  it('loads 10,000 events page by page and renders only the rows in view', { timeout: 180_000 }, async () => {
    await page.getByRole('combobox', { name: 'Observer', exact: true }).selectOption(String(archive.id));
    await status().getByText('200 of 200 events · more to load').waitFor();
    // Scrolling to the end (the keyboard's End) fetches the next older page: each page awaited
    // before the next End, until none is left.
    await feed().focus();
    const loaded = async () => Number(/(\d+) of \d+ events/.exec((await status().textContent()) ?? '')?.[1]);
    // End is pressed again while the count has not grown: a press that lands as the list
    // re-renders can leave the view short of the new end, and no page is asked for (seen about one
    // run in three since 2026-11-27; a user presses again, and so does this test). The timeout is
    // a failsafe for a busy machine, not a timing claim.
    const endUntilMore = async (shown: number) => {
      if ((await loaded()) <= shown) await feed().press('End');
      return loaded();
    };
    for (let shown = 200; shown < 10_001; shown = await loaded())
      await expect.poll(() => endUntilMore(shown), { timeout: 15_000, interval: 250 }).toBeGreaterThan(shown);
    expect(await status().textContent()).toMatch(/10001 of 10001 events · all loaded/);
    expect(await rows().count()).toBeLessThan(40);
    expect(await texts().then((x) => x[x.length - 1])).toContain('Archive');
    // The middle of the list: the rows there are drawn, and only they.
    await feed().evaluate((el) => {
      el.scrollTop = 60 * 5000;
    });
    await expect.poll(() => rows().first().getAttribute('aria-posinset')).toBe('4996');
    expect(await rows().count()).toBeLessThan(40);
    await expect.poll(texts).toContain('Archived record 5000');
    // Oldest first pages the other way: the first record leads, and more is there to load.
    await page.getByLabel('Order', { exact: true }).selectOption({ label: 'Oldest first' });
    await status().getByText('200 of 200 events · more to load').waitFor();
    await expect.poll(() => texts().then((x) => x[1])).toBe('Archived record 1');
    await page.getByRole('button', { name: 'Load newer events' }).click();
    await status().getByText('400 of 400 events · more to load').waitFor();
    await accessible('observer-10000');
    await page.getByLabel('Order', { exact: true }).selectOption({ label: 'Newest first' });
    await page.getByRole('combobox', { name: 'Observer', exact: true }).selectOption(String(harbour.id));
    await status()
      .getByText(/all loaded/)
      .waitFor();
    // One state panel and one actions panel, of the observer shown.
    await expect.poll(() => page.getByRole('region', { name: 'State at a time' }).count()).toBe(1);
    await expect.poll(() => page.getByRole('region', { name: 'Reflection and cycle' }).count()).toBe(1);
    await expect
      .poll(() =>
        page.getByRole('region', { name: 'Reflection and cycle' }).getByRole('status').textContent(),
      )
      .toBe('');
  });

  it('fits a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('region', { name: 'Summary' }).getByText('Cycles').waitFor();
    await figure('Events by then').waitFor();
    await rows().first().waitFor();
    await accessible('observer-phone');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    await accessible('observer-desktop');
  });
});

describe('an observer’s owner who is no admin', () => {
  it('picks their own observer, sees its timeline and reflects; another tab’s reflection shows', async () => {
    const owner = await createUser(t, 'public', { name: 'Otto Owner' });
    // Made as the admin: the owner's observer and an instance below it, with an event.
    const mine = await f.instance({ name: 'Orchard watch', level: 8, source: 'portal', userId: owner.id });
    const tree = await f.instance({
      name: 'Pear tree',
      level: 5,
      source: 'game_client',
      parentInstanceId: mine.id,
      userId: owner.id,
    });
    await ingest('harvest', 'Picked twelve pears', tree.id);
    // What the admin tests made is no business of theirs.
    const r = await t.api('GET', '/api/observer/observers', { token: owner.accessToken });
    expect(r.body.observers.map((o: { id: number }) => o.id)).toEqual([mine.id]);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = async () => {
      const p = collectErrors(await context.newPage(), consoleErrors);
      // Each tab signs in (the refresh token lives in the tab's sessionStorage).
      await p.goto(`${t.url}/`);
      await p.getByLabel('Email').fill(owner.email);
      await p.getByLabel('Password').fill(owner.password);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('navigation').getByRole('link', { name: 'Observer' }).click();
      return p;
    };
    try {
      const one = await tab();
      const pick = one.getByRole('combobox', { name: 'Observer', exact: true });
      // Their observer only, picked: no admin's observer, no refusal.
      await expect
        .poll(() => pick.locator('option').allTextContents())
        .toEqual([`Orchard watch (#${mine.id})`]);
      expect(await pick.inputValue()).toBe(String(mine.id));
      const timeline = one.getByRole('region', { name: 'Timeline' });
      await timeline.getByRole('status').getByText('Live').waitFor();
      const rowsOf = (p: Page) =>
        p.getByRole('feed', { name: 'Timeline' }).locator('article.event .event-text');
      await expect
        .poll(() => rowsOf(one).allTextContents())
        .toEqual([
          'Picked twelve pears',
          expect.stringContaining('Pear tree'),
          expect.stringContaining('Orchard watch'),
        ]);
      await timeline.getByRole('status').getByText('3 of 3 events · all loaded').waitFor();
      // Live too.
      await ingest('harvest', 'Picked four more', tree.id);
      await expect.poll(() => rowsOf(one).first().textContent()).toBe('Picked four more');
      expect(await one.getByRole('alert').count()).toBe(0);
      await one.getByRole('region', { name: 'Summary' }).getByText('Cycles').waitFor();
      await one.getByRole('region', { name: 'State at a time' }).waitFor();
      await accessible('observer-owner', one);

      // A second tab reflects; the first shows that reflection, made elsewhere.
      const two = await tab();
      const panelOf = (p: Page) => p.getByRole('region', { name: 'Reflection and cycle' });
      await two.getByRole('region', { name: 'Timeline' }).getByRole('status').getByText('Live').waitFor();
      await panelOf(two).getByRole('button', { name: 'Reflect' }).click();
      await panelOf(two)
        .getByRole('status')
        .getByText(/Reflection on \d+ events/)
        .waitFor();
      const text = await panelOf(two).locator('.reflection').textContent();
      expect(text).toBeTruthy();
      await expect.poll(() => panelOf(one).locator('.reflection').textContent()).toBe(text);
      expect(await panelOf(one).getByRole('status').textContent()).toContain('made elsewhere');
      expect(await panelOf(two).getByRole('status').textContent()).not.toContain('made elsewhere');
      expect(await one.getByRole('alert').count()).toBe(0);
      await accessible('observer-owner-reflection', one);

      // The owner's country dashboard is theirs to see too.
      await one.getByRole('link', { name: 'Dashboard' }).click();
      const country = one.getByRole('region', { name: 'Country dashboard' });
      await country.waitFor();
      await expect.poll(() => country.textContent()).toMatch(/Healthy|Warning|Critical/);
      expect(await one.getByRole('alert').count()).toBe(0);
      await accessible('dashboard-owner', one);
    } finally {
      await context.close();
    }
  });

  it('a user with no observer is told so, with no error', async () => {
    const nobody = await createUser(t, 'public');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const p = collectErrors(await context.newPage(), consoleErrors);
      await p.goto(`${t.url}/`);
      await p.getByLabel('Email').fill(nobody.email);
      await p.getByLabel('Password').fill(nobody.password);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('navigation').getByRole('link', { name: 'Observer' }).click();
      await p.getByText('You have no observer to watch').waitFor();
      expect(await p.getByRole('alert').count()).toBe(0);
      await accessible('observer-none', p);
    } finally {
      await context.close();
    }
  });
});
