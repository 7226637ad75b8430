// The Observer page for an observer's owner who is no admin, in a real browser against the real
// server: their own observers only (none of the admin's), its timeline live, a reflection made in
// another tab, their country dashboard; a user with no observer is told so. Each page passes
// axe-core (no serious or critical finding) with no console error. The server, the admin's
// observers and the browser are in observer-page-fixtures.ts; the admin's page in observer.e2e.ts.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createUser } from '../harness.js';
import { collectErrors } from './browser.js';
import {
  accessible,
  browser,
  consoleErrors,
  f,
  ingest,
  t,
  useObserverApp,
} from './observer-page-fixtures.js';

useObserverApp();

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
