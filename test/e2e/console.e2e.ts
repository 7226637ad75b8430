// The web console as a person uses it, page by page, in a real browser against the real server:
// each page is also checked by axe-core (no serious or critical finding), and no page may log a
// console error. Screenshots of each page go to $E2E_SCREENSHOTS (default: a temp directory).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../harness.js';
import { currentLink, mainLinks, ROUTES } from '../../web/src/routes.js';
import { openBrowser, expectAccessible, expectFailedRequest } from './browser.js';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'e2e-shots-'));
mkdirSync(shots, { recursive: true });

let t: TestApp;
let browser: Browser;
let page: Page;
let admin: TestUser;
const consoleErrors: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso', { name: 'Ada Admin' });
  const npc = await t.api('POST', '/api/admin/data/npcs', {
    token: admin.accessToken,
    body: { name: 'Mira', description: 'A cheerful blacksmith' },
  });
  expect(npc.status).toBe(201);
  ({ browser, page } = await openBrowser(consoleErrors));
});

// One test's failure is its own: the next starts with no recorded console error.
beforeEach(() => {
  consoleErrors.length = 0;
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const accessible = (name: string, target: Page = page) =>
  expectAccessible(target, consoleErrors, shots, name);

async function signIn(email: string, password: string) {
  await page.goto(`${t.url}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Chat' }).waitFor();
}

describe('signed out', () => {
  it('shows sign-in; a wrong password is an alert', async () => {
    await page.goto(`${t.url}/`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('The email or password is not correct');
    // The 401 the browser logs for the failed request is the expected answer, not a page error.
    expectFailedRequest(consoleErrors, 401, '/api/auth/login');
    await accessible('signin');
  });

  it('creates an account; a non-admin sees no Admin link', async () => {
    await page.goto(`${t.url}/`);
    await page.getByLabel('Email').fill('new.person@example.test');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    const nav = page.getByRole('navigation');
    for (const name of ['Chat', 'Memory', 'Observer', 'Workflows', 'Dashboard'])
      await nav.getByRole('link', { name }).waitFor();
    expect(await nav.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('verify-email and reset-password pages answer a bad token with an alert', async () => {
    await page.goto(`${t.url}/verify-email?token=not-a-token`);
    await page.getByRole('alert').waitFor();
    expectFailedRequest(consoleErrors, 400, '/api/auth/verify-email');
    await accessible('verify-email');
    await page.goto(`${t.url}/reset-password?token=not-a-token`);
    await page.getByLabel('New password', { exact: true }).fill('another long password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').waitFor();
    expectFailedRequest(consoleErrors, 400, '/api/auth/reset-password');
    await accessible('reset-password');
  });
});

describe('signed in as an admin', () => {
  beforeAll(async () => {
    await signIn(admin.email, admin.password);
  });

  it('chats: the reply streams into the log; a refused message stays in the field', async () => {
    const log = page.getByRole('log', { name: 'Conversation' });
    // Nothing to send yet; once there is text (and the socket is connected) it may be sent.
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await page.getByLabel('Message').fill('Hello there, who are you?');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Send' }).click();
    // One reply, the one the server stored.
    await expect.poll(() => log.locator('.msg.assistant').count(), { timeout: 30_000 }).toBe(1);
    const [reply] = await t.deps.db
      .selectFrom('chat_messages')
      .select('text')
      .where('user_id', '=', admin.id)
      .where('role', '=', 'assistant')
      .execute();
    await expect.poll(() => log.locator('.msg.assistant').textContent()).toContain(reply!.text);
    await expect.poll(() => page.getByLabel('Message').inputValue(), { timeout: 30_000 }).toBe('');
    const tooLong = 'x'.repeat(8001);
    await page.getByLabel('Message').fill(tooLong);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByLabel('Message').inputValue()).toBe(tooLong);
    await page.getByLabel('Message').fill('');
    // An attachment goes with the next message.
    await page.getByLabel('Attach files').setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('The meeting is on Thursday.'),
    });
    await page.getByRole('status').getByText('Attached: notes.txt').waitFor();
    await accessible('chat');
    await page.getByLabel('Message').fill('What is in my notes?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByText('Attached: notes.txt').count(), { timeout: 30_000 }).toBe(0);
    await expect.poll(() => page.getByLabel('Message').inputValue(), { timeout: 30_000 }).toBe('');
  });

  it('chats with a character in a group conversation', async () => {
    await page.getByRole('checkbox', { name: 'Mira' }).check();
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByRole('button', { name: 'Group: Mira' }).waitFor();
    await page.getByLabel('Message').fill('Mira, can you forge a sword?');
    await page.getByRole('button', { name: 'Send' }).click();
    const log = page.getByRole('log', { name: 'Conversation' });
    await expect.poll(() => log.locator('.msg.assistant').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    // The question stays above its answer, though the answer may stream in before the ack.
    await expect.poll(() => log.locator('.msg').last().getAttribute('class')).toContain('assistant');
    await expect.poll(() => log.locator('.msg').nth(-2).textContent()).toContain('forge a sword');
    await accessible('chat-group');
  });

  it('keeps the session across a reload (refresh token rotated)', async () => {
    const stored = () => page.evaluate(() => sessionStorage.getItem('assistant.refreshToken'));
    const before = await stored();
    expect(before).toMatch(/.{20}/);
    await page.reload();
    await page.getByRole('navigation').getByRole('link', { name: 'Admin' }).waitFor();
    // The reload spent the stored token for a new one (not tried here: spending either again would
    // end the session the next tests use; auth.test.ts refuses a spent one).
    await expect.poll(stored).not.toBe(before);
    expect(await stored()).toMatch(/.{20}/);
  });

  it('memory: remembers, searches, forgets', async () => {
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByLabel('New memory').fill('My favourite colour is teal');
    await page.getByRole('button', { name: 'Remember' }).click();
    const list = page.getByRole('list', { name: 'Memories' });
    await list.getByText('My favourite colour is teal').waitFor();
    await page.getByRole('searchbox', { name: 'Search memories' }).fill('colour');
    await list.getByText('My favourite colour is teal').waitFor();
    await accessible('memory');
    await list.getByRole('button', { name: /^Edit/ }).first().click();
    await page.getByLabel('Edit memory').fill('My favourite colour is deep teal');
    await page.getByRole('button', { name: 'Save' }).click();
    await list.getByText('My favourite colour is deep teal').waitFor();
    await list
      .getByRole('button', { name: /^Forget/ })
      .first()
      .click();
    await expect.poll(() => list.getByText('My favourite colour is deep teal').count()).toBe(0);
  });

  it('workflows: creates one, a guarded transition says what is missing', async () => {
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByLabel('Definition').selectOption({ index: 0 });
    await page.getByRole('button', { name: 'Create' }).click();
    const transitions = page.getByRole('group', { name: 'Transitions' });
    await transitions.getByRole('button').first().waitFor();
    // The first exit is unguarded; the next forward one needs an approval.
    await transitions.getByRole('button').first().click();
    await page
      .getByRole('status')
      .getByText(/Moved to/)
      .waitFor();
    await transitions.getByRole('button').first().click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/missing/i);
    expectFailedRequest(consoleErrors, 409, '/transition'); // the answer shown
    await accessible('workflows');
    // An approval satisfies the guard, and the instance advances by itself.
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText('Approved; moved to execution.').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    // Entering execution starts the orchestrator: it seeds tasks and runs them, and their
    // artifacts come up for review.
    await page.getByText('A run is in progress…').waitFor();
    expect(await page.getByRole('button', { name: 'Orchestrate' }).isDisabled()).toBe(true);
    await page.getByRole('table', { name: 'Tasks' }).waitFor();
    const artifacts = page.getByRole('list', { name: 'Artifacts' });
    await artifacts
      .getByRole('button', { name: /^Approve artifact/ })
      .first()
      .waitFor();
    await artifacts
      .getByRole('button', { name: /^Approve artifact/ })
      .first()
      .click();
    await page.getByRole('status').getByText('Artifact approved.').waitFor();
    // The run ends once every task has run.
    await expect.poll(() => page.getByText('A run is in progress…').count(), { timeout: 30_000 }).toBe(0);
    await accessible('workflows-run');
  });

  it('workflows: switching instance quickly shows the chosen one’s tasks, never the last one’s', async () => {
    // Two instances, each with a task of its own (seeded, not run).
    const ids: Record<'slow' | 'quick', string> = { slow: '', quick: '' };
    for (const which of ['slow', 'quick'] as const) {
      const made = await t.api('POST', '/api/protocol/instances', {
        token: admin.accessToken,
        body: {
          machineId: 'documentation_flow_v1',
          context: { title: `Harbour ${which}`, tasks: [{ title: `The ${which} one’s task` }] },
        },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const id: string = made.body.id;
      ids[which] = id;
      const run = await t.api('POST', `/api/protocol/instances/${id}/orchestrate`, {
        token: admin.accessToken,
        body: { runTasks: false },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(202);
      await expect
        .poll(async () => {
          const [inst, tasks] = await Promise.all([
            t.api('GET', `/api/protocol/instances/${id}`, { token: admin.accessToken }),
            t.api('GET', `/api/protocol/instances/${id}/tasks`, { token: admin.accessToken }),
          ]);
          return inst.body.activeRunId === null && tasks.body.tasks.length > 0;
        })
        .toBe(true);
    }
    // A fresh page: nothing picked yet.
    await page.goto(`${t.url}/workflows`);
    const board = page.getByLabel('Board', { exact: true });
    const pick = (which: 'slow' | 'quick') =>
      board.getByRole('button', { name: `Harbour ${which} · ${ids[which].slice(0, 8)}` });
    await pick('quick').waitFor();

    // The slow one's tasks answer a second and a half late: after the quick one's.
    const slowTasks = `/api/protocol/instances/${ids.slow}/tasks`;
    await page.route(`**${slowTasks}`, async (route) => {
      const answer = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // (a page closed or unrouted meanwhile has no use for it)
      await route.fulfill({ response: answer }).catch(() => undefined);
    });
    try {
      const lateAnswer = page.waitForResponse((r) => r.url().endsWith(slowTasks));
      await pick('slow').click();
      await pick('quick').click();
      const tasks = page.getByRole('table', { name: 'Tasks' });
      const quickTask = tasks.getByRole('cell', { name: /^The quick one’s task/ });
      await quickTask.waitFor();
      await lateAnswer;
      // The late answer has come and gone: the quick one's tasks stay, the slow one's never show.
      await page.waitForTimeout(300);
      expect(await quickTask.count()).toBe(1);
      expect(await page.getByRole('cell', { name: /^The slow one’s task/ }).count()).toBe(0);
      await page.getByRole('heading', { level: 2, name: /documentation_flow_v1/ }).waitFor();
    } finally {
      await page.unroute(`**${slowTasks}`);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('every route of the table answers a reload with its page, its link current', async () => {
    for (const route of ROUTES) {
      // The pages mails and external sign-in link to have tests of their own (they need a token).
      if (route.access === 'anyone') continue;
      await page.goto(`${t.url}${route.path}`);
      const title =
        'section' in route ? route.section.title : 'studio' in route ? route.studio.title : route.nav;
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
      const link = mainLinks(true).find((l) => l.path === currentLink(route.path));
      expect(link, route.path).toBeDefined();
      const current = page.getByRole('navigation', { name: 'Main' }).locator('[aria-current="page"]');
      expect(await current.textContent(), route.path).toBe(link!.label);
      if ('section' in route)
        expect(
          await page
            .getByRole('navigation', { name: 'Admin sections' })
            .locator('[aria-current="page"]')
            .textContent(),
        ).toBe(route.section.link);
      if ('studio' in route)
        expect(
          await page
            .getByRole('navigation', { name: 'Studio' })
            .locator('[aria-current="page"]')
            .textContent(),
        ).toBe(route.studio.link);
      await page.waitForLoadState('networkidle');
    }
    expect(consoleErrors).toEqual([]);
  });

  it('observer: the timeline grows live; playback controls', async () => {
    const firstPage = page.waitForResponse((r) => /\/api\/observer\/observer\/\d+\/timeline/.test(r.url()));
    await page.getByRole('link', { name: 'Observer' }).click();
    const loaded = ((await (await firstPage).json()) as { events: { timelineAt: string }[] }).events;
    const feed = page.getByRole('feed', { name: 'Timeline' });
    await feed.waitFor();
    await page.getByRole('status').getByText('Live').waitFor();
    const res = await t.api('POST', '/api/sync/ingest-event', {
      token: admin.accessToken,
      body: { userId: admin.id, eventType: 'quest_started', eventText: 'The hero sets out' },
    });
    expect(res.status).toBe(201);
    await feed.getByText('The hero sets out').waitFor();
    for (const s of ['1x', '2x', '5x', '10x']) await page.getByRole('button', { name: s }).waitFor();
    await page.getByRole('button', { name: '10x' }).click();
    await page.getByRole('button', { name: 'Play' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    await accessible('observer');
    // Many events: the feed renders only the rows in view. The root observer's timeline holds
    // every event of this run (its first page: up to 200), so the count is taken, not assumed.
    const status = page.getByRole('region', { name: 'Timeline' }).getByRole('status');
    const before = Number(/of (\d+) events/.exec((await status.textContent()) ?? '')?.[1]);
    expect(before).toBeGreaterThan(0);
    for (let batch = 0; batch < 10; batch++)
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.api('POST', '/api/sync/ingest-event', {
            token: admin.accessToken,
            body: { userId: admin.id, eventType: 'tick', eventText: `Tick ${batch * 20 + i}` },
          }),
        ),
      );
    await page.getByRole('button', { name: 'Show all' }).click();
    // All 200 ticks arrived live, and all are shown.
    const all = before + 200;
    await status.getByText(new RegExp(`\\b${all} of ${all} events`)).waitFor();
    expect(await feed.locator('article').count()).toBeLessThan(30);
    // Seeking to the start of the range shows only what had happened by then: the earliest
    // loaded event and any other of the same millisecond (the feed's times are milliseconds).
    const times = loaded.map((e) => Date.parse(e.timelineAt));
    const atStart = times.length === 0 ? 1 : times.filter((t) => t === Math.min(...times)).length;
    await page.getByLabel('Playback position').fill('0');
    await expect.poll(() => feed.locator('article').count()).toBe(atStart);
    await status.getByText(new RegExp(`\\b${atStart} of ${all} events`)).waitFor();
  });

  it('dashboard: health as a word and a chart', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByText(/^(healthy|warning|critical)$/).waitFor();
    await page.getByRole('img', { name: /Users by role/ }).waitFor();
    await accessible('dashboard');
  });

  it('admin: users and an API key shown once', async () => {
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('table', { name: 'Users' }).getByText(admin.email).waitFor();
    await page.getByLabel('Key name').fill('game server');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New API key').textContent();
    expect(key?.length).toBeGreaterThan(20);
    await accessible('admin');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByText(key!).count()).toBe(0);
    await page.getByRole('table', { name: 'Protocols' }).getByRole('row').nth(1).waitFor();
    await page.getByLabel('Channel id').fill('general');
    await page.getByRole('button', { name: 'Save channel' }).click();
    await page
      .getByRole('status')
      .getByText(/Channel general now follows/)
      .waitFor();
  });

  it('works at a phone width', async () => {
    // The same tab: the refresh token lives in this tab's sessionStorage.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('log', { name: 'Conversation' }).waitFor();
    await accessible('chat-phone');
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('button', { name: 'Create' }).waitFor();
    await accessible('workflows-phone');
    for (const [link, name] of [
      ['Memory', 'memory-phone'],
      ['Observer', 'observer-phone'],
      ['Dashboard', 'dashboard-phone'],
      ['Admin', 'admin-phone'],
    ] as const) {
      await page.getByRole('link', { name: link }).click();
      await page.getByRole('heading', { level: 1, name: link }).waitFor();
      await page.waitForLoadState('networkidle');
      await accessible(name);
      // Nothing wider than the screen: no sideways scrolling of the whole page.
      // (a wide table scrolls inside itself)
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), name).toBeLessThanOrEqual(
        390,
      );
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
