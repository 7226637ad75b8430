// The console's character studio as a game designer uses it, in a real browser against the real
// server (offline models): make a character with a tool limit, teach it a text and a file and
// watch the job finish, find the new memory, talk with it (the reply streams) with the prompt
// preview showing that memory and the tool, and edit the game's quests, items and a player's
// progress. Each page is checked by axe-core (no serious or critical finding, no console error)
// and screenshotted at 1280×800 and 390×844 (nothing wider than the phone's screen). Also the
// fixes seen on the way: the audit log's filters at 1280 px, group history's speaker names, and
// the Observer summary of a user without an observer. One server and one browser for the file.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../harness.js';
import { openBrowser, expectAccessible } from './browser.js';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'e2e-studio-'));
mkdirSync(shots, { recursive: true });

let t: TestApp;
let browser: Browser;
let page: Page;
let admin: TestUser;
let player: TestUser;
const errors: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso', { name: 'Ada Admin' });
  player = await createUser(t, 'public', { name: 'Pia Player' });
  const sword = await t.api('POST', '/api/admin/data/items', {
    token: admin.accessToken,
    body: { name: 'Sword', type: 'weapon', description: 'A fine blade' },
  });
  expect(sword.status).toBe(201);
  ({ browser, page } = await openBrowser(errors));
  await page.goto(`${t.url}/`);
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Studio' }).waitFor();
});

beforeEach(() => {
  errors.length = 0;
});

// A failed test leaves a picture of where it stopped.
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail')
    await page?.screenshot({ path: join(shots, `failed-${ctx.task.name.slice(0, 40)}.png`), fullPage: true });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const accessible = (name: string) => expectAccessible(page, errors, shots, name);

/** The page at a phone's width: accessible, nothing wider than the screen. */
async function onPhone(name: string) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await page.waitForLoadState('networkidle');
    await accessible(`${name}-phone`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), name).toBeLessThanOrEqual(
      390,
    );
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

const status = (text: string | RegExp) => page.getByRole('status').getByText(text).first().waitFor();
let miraId: number;

describe('the character studio', () => {
  it('makes a character with its card, player memory and a tool limit; finds it; keeps it on reload', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Studio' }).click();
    await page.getByRole('heading', { level: 1, name: 'Characters' }).waitFor();
    await page.getByRole('button', { name: 'New character' }).click();
    const form = page.getByRole('form', { name: 'New character' });
    await form.getByLabel('Name').fill('Mira');
    await form.getByLabel('Description').fill('The blacksmith of the harbour town.');
    await form.getByLabel('Personality').fill('Gruff, fair, proud of her forge.');
    await form.getByLabel('Speaking style').fill('Short sentences.');
    await form.getByLabel('Goals (one a line)').fill('Forge a blade\nFind an apprentice');
    await form.getByLabel('joins the pool every “shared” character reads').check();
    await form.getByLabel('May give items to a player or take them').check();
    // A limit that makes no sense is named, and nothing is sent.
    await form.getByLabel('Items at a time').fill('0');
    await form.getByRole('button', { name: 'Create character' }).click();
    await form.getByRole('alert').getByText('Items at a time must be a whole number of 1 or more.').waitFor();
    await form.getByLabel('Items at a time').fill('2');
    await form.getByLabel('Items a day').fill('6');
    await form.getByRole('checkbox', { name: 'Sword' }).check();
    await accessible('studio-new-character');
    await form.getByRole('button', { name: 'Create character' }).click();
    await status(/^Mira saved\./);

    const [row] = await t.deps.db.selectFrom('users').select('id').where('name', '=', 'Mira').execute();
    miraId = row!.id;
    const saved = await t.api('GET', `/api/admin/data/npcs/${miraId}`, { token: admin.accessToken });
    expect(saved.body).toMatchObject({
      name: 'Mira',
      personality: 'Gruff, fair, proud of her forge.',
      speakingStyle: 'Short sentences.',
      goals: ['Forge a blade', 'Find an apprentice'],
      playerMemory: 'shared',
    });
    // The tools as the server keeps them (a server without tools answers without the field).
    if ('tools' in saved.body)
      expect(saved.body.tools.modifyInventory).toMatchObject({ maxQuantity: 2, dailyQuantity: 6 });
    expect(page.url()).toContain(`character=${miraId}`);

    // The search finds her by a word of her description, and says when nothing matches.
    const found = page.getByRole('list', { name: 'Characters found' });
    await page.getByLabel('Search characters').fill('BLACKSMITH');
    await found.getByRole('button', { name: /^Mira/ }).waitFor();
    await page.getByLabel('Search characters').fill('sailor');
    await found.getByText('No character matches.').waitFor();
    await page.getByLabel('Search characters').fill('');

    // A reload of the address opens the same card.
    await page.reload();
    const edit = page.getByRole('form', { name: 'Edit Mira' });
    await expect.poll(() => edit.getByLabel('Speaking style').inputValue()).toBe('Short sentences.');
    expect(await edit.getByLabel('joins the pool every “shared” character reads').isChecked()).toBe(true);
    await accessible('studio-characters');
    await onPhone('studio-characters');
  });

  it('teaches it a text and a file, follows the job to its end, and finds, edits and forgets memories', async () => {
    await page.getByRole('link', { name: 'Train Mira' }).click();
    await page.getByRole('heading', { level: 1, name: 'Knowledge and training' }).waitFor();
    await expect.poll(() => page.getByLabel('Character', { exact: true }).inputValue()).toBe(String(miraId));
    await page.getByLabel('Text to learn').fill('Mira’s forge is heated by a tame dragon named Ember.');
    await page.getByRole('button', { name: 'Teach the text' }).click();
    await status('Mira learnt the text: 1 memory.');
    const memories = page.getByRole('list', { name: 'The character’s memories' });
    await memories.getByText('tame dragon named Ember').waitFor();

    await page.getByLabel('File', { exact: true }).check();
    await page.getByLabel('File (PDF, DOCX or text)').setInputFiles({
      name: 'harbour-lore.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(
        'The harbour bell rings at dawn to call the fishing boats home.\n\nMira repairs the bell every spring.',
      ),
    });
    await page.getByRole('button', { name: 'Send the file' }).click();
    const jobs = page.getByRole('list', { name: 'Training jobs' });
    await jobs.getByText('harbour-lore.txt').waitFor();
    await jobs.getByText(/^Done: \d+ memor/).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Show what harbour-lore.txt taught' }).click();
    const taught = page.getByRole('list', { name: 'What harbour-lore.txt taught' });
    await expect.poll(() => taught.getByRole('listitem').count()).toBeGreaterThan(0);
    await memories.getByText(/bell/).first().waitFor();
    await accessible('studio-knowledge');

    // Search by meaning, filter by tier and source, edit and forget.
    await page.getByLabel('Search the character’s memories').fill('dragon');
    await memories.getByText('tame dragon named Ember').waitFor();
    await page.getByLabel('Search the character’s memories').fill('');
    await page.getByLabel('Tier').selectOption('shared');
    await memories.getByText('No memories here.').waitFor();
    await page.getByLabel('Tier').selectOption('assistant_core');
    await page.getByLabel('Source').selectOption('manual_ingestion_text');
    await expect.poll(() => memories.getByRole('listitem').count()).toBe(1);
    await memories.getByRole('button', { name: /^Edit memory/ }).click();
    await page
      .getByLabel('Edit memory')
      .fill('Mira’s forge is heated by a tame dragon named Ember, who likes coal.');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await memories.getByText('who likes coal').waitFor();
    await page.getByLabel('Source').selectOption('');
    await onPhone('studio-knowledge');

    const forgettable = await t.api('POST', '/api/training/ingest-text', {
      token: admin.accessToken,
      body: { npcUserId: miraId, text: 'A rumour to forget.' },
    });
    expect(forgettable.status).toBe(201);
    await page.reload();
    const rumour = memories.getByRole('listitem').filter({ hasText: 'A rumour to forget.' });
    await rumour.getByRole('button', { name: /^Forget memory/ }).click();
    await status('Forgotten.');
    expect(await rumour.count()).toBe(0);
    const left = await t.api('GET', `/api/admin/memories?userId=${miraId}&limit=100`, {
      token: admin.accessToken,
    });
    expect(left.body.memories.some((m: { content: string }) => m.content.includes('rumour'))).toBe(false);
  });

  it('talks with it: the reply streams in, and the preview shows the memory and the tool', async () => {
    await page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name: 'Try it' }).click();
    await page.getByRole('heading', { level: 1, name: 'Try it' }).waitFor();
    const log = page.getByRole('log', { name: 'Conversation with Mira' });
    await page.getByLabel('Message', { exact: true }).fill('Tell me about Ember the dragon.');
    const send = page.getByRole('button', { name: 'Send' });
    await expect.poll(() => send.isEnabled()).toBe(true);
    await send.click();
    await expect.poll(() => log.locator('.msg.assistant').count(), { timeout: 30_000 }).toBe(1);
    const [reply] = await t.deps.db
      .selectFrom('chat_messages')
      .select('text')
      .where('user_id', '=', admin.id)
      .where('role', '=', 'assistant')
      .orderBy('id', 'desc')
      .limit(1)
      .execute();
    await expect.poll(() => log.locator('.msg.assistant').textContent()).toContain(reply!.text);
    await expect.poll(() => log.locator('.msg.assistant').textContent()).toMatch(/^Mira: /);
    const retrieved = page.getByRole('list', { name: 'Memories retrieved' });
    // The trained memory (not only the player's own words, kept as a shared memory).
    await retrieved
      .getByRole('listitem')
      .filter({ hasText: 'manual_ingestion_text' })
      .filter({ hasText: /tame dragon named Ember/ })
      .waitFor();
    await page.getByRole('list', { name: 'Tools offered' }).getByText('modifyInventory').waitFor();
    await page.getByLabel('System prompt').getByText(/Mira/).first().waitFor();
    await accessible('studio-try');

    // A direct message, previewed as another player.
    await page.getByLabel('by direct message').check();
    await page.getByLabel('Player').selectOption(String(player.id));
    await page.getByText('Messages are sent as you').waitFor();
    await page.getByLabel('Message', { exact: true }).fill('Is the forge lit?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => log.locator('.msg.assistant').count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => log.locator('.msg.assistant').textContent()).toMatch(/^Mira: /);
    // The preview of that turn: a server that previews direct messages (`direct`) shows it; one
    // that does not refuses it (the page asks again without, then shows the server's reason).
    await page
      .getByText(/^Of “Is the forge lit\?”/)
      .or(page.getByRole('alert'))
      .first()
      .waitFor();
    for (let i = errors.length - 1; i >= 0; i--)
      if (errors[i]!.includes('status of 400') && errors[i]!.includes('/api/admin/prompts/preview'))
        errors.splice(i, 1);
    await onPhone('studio-try');
  });

  it('edits the game’s quests and items and a player’s quests, relationships and inventory', async () => {
    await page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name: 'Game data' }).click();
    await page.getByRole('heading', { level: 1, name: 'The game’s data' }).waitFor();
    await page.getByRole('button', { name: 'New quest' }).click();
    await page.getByLabel('Quest title').fill('Relight the lighthouse');
    await page
      .getByLabel('Objectives, in order (one a line)')
      .fill('Buy oil\nClimb the tower\nLight the lamp');
    await page.getByRole('button', { name: 'Save quest' }).click();
    await status('Quest “Relight the lighthouse” saved.');
    await page.getByRole('list', { name: 'Quests' }).getByText('Climb the tower').waitFor();
    await page.getByRole('button', { name: 'New item' }).click();
    await page.getByLabel('Item name').fill('Lamp oil');
    await page.getByLabel('Item type').fill('consumable');
    await page.getByRole('button', { name: 'Save item' }).click();
    await page
      .getByRole('table', { name: 'Items' })
      .getByRole('cell', { name: 'Lamp oil', exact: true })
      .waitFor();

    await page.getByLabel('Player', { exact: true }).selectOption(String(player.id));
    expect(page.url()).toContain(`player=${player.id}`);
    await page.getByLabel('Give a quest').selectOption({ label: 'Relight the lighthouse' });
    await page.getByRole('button', { name: 'Give quest' }).click();
    const theirs = page.getByRole('list', { name: 'The player’s quests' });
    await theirs.getByText('Relight the lighthouse', { exact: true }).waitFor();
    await page
      .getByLabel('On objective of Relight the lighthouse')
      .selectOption({ label: '2. Climb the tower' });
    await status('Quest progress saved.');
    await expect
      .poll(async () => (await t.api('GET', '/api/quests', { token: player.accessToken })).body.quests[0])
      .toMatchObject({ step: 1, status: 'active' });

    await page.getByLabel('With').selectOption({ label: 'Mira' });
    await page.getByLabel('Affinity').fill('0.5');
    await page.getByLabel(/^Flags/).fill('metAtForge=yes');
    await page.getByRole('button', { name: 'Save relationship' }).click();
    await page.getByRole('list', { name: 'Relationships' }).getByText('affinity 0.50').waitFor();

    await page.getByRole('combobox', { name: 'Item', exact: true }).selectOption({ label: 'Lamp oil' });
    await page.getByLabel('Quantity (− takes)').fill('3');
    await page.getByRole('button', { name: 'Change items' }).click();
    await page.getByRole('list', { name: 'Items held' }).getByText('Lamp oil × 3').waitFor();
    await page.getByLabel('Coins (− takes)').fill('-5');
    await page.getByRole('button', { name: 'Change coins' }).click();
    // Coins never go below zero: the server's refusal is shown.
    await page.getByRole('alert').first().waitFor();
    errors.splice(0, errors.length, ...errors.filter((e) => !e.includes('status of 409')));
    await accessible('studio-game');
    await onPhone('studio-game');
  });
});

describe('fixes seen on the way', () => {
  it('the audit log’s filters use the width at 1280 px', async () => {
    await page.goto(`${t.url}/admin/audit-log`);
    const path = page.getByLabel('Path starts with');
    await path.waitFor();
    const box = await path.boundingBox();
    expect(box!.width).toBeGreaterThan(180);
    await accessible('audit-log-filters');
  });

  it('group history names who said each reply', async () => {
    await page.goto(`${t.url}/chat`);
    await page.getByRole('checkbox', { name: 'Mira' }).check();
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByRole('button', { name: 'Group: Mira' }).waitFor();
    await page.getByLabel('Message', { exact: true }).fill('Mira, is the bell fixed?');
    await page.getByRole('button', { name: 'Send' }).click();
    const log = page.getByRole('log', { name: 'Conversation' });
    await expect.poll(() => log.locator('.msg.assistant').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await page.reload();
    await page.getByRole('button', { name: 'Group: Mira' }).click();
    await expect.poll(() => log.locator('.msg.assistant').first().textContent()).toMatch(/^Mira: /);
  });

  it('the Observer page says a user without an observer has no summary', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(player.email);
    await page.getByLabel('Password').fill(player.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Observer' }).click();
    await page.getByText('No observer, so no summary.').waitFor();
    expect(
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Studio' }).count(),
    ).toBe(0);
    // A non-admin opening a studio page is told it is for admins.
    await page.goto(`${t.url}/studio/try`);
    await page.getByRole('alert').getByText('Only admins may open this page.').waitFor();
  });
});
