// The console's later pieces as an admin uses them, in a real browser against the real server: a
// workflow's suggestions (execute, undo an automatic move), task edit and re-run, an artifact's
// content and review notes, the country dashboard, and the admin zones (protocols, scheduled
// tasks, audit log). Each page is checked by axe-core (no serious or critical finding) with no
// console error, and screenshotted at 1280×800 and 390 px wide. Signing in is in
// console-signin.e2e.ts; the server and browser in console-idp-fixtures.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { expectFailedRequest } from './browser.js';
import {
  accessible,
  admin,
  consoleErrors,
  onPhone,
  page,
  signIn,
  t,
  useConsoleApp,
} from './console-idp-fixtures.js';

useConsoleApp();

describe('signed in as an admin', () => {
  let observerId: number;

  beforeAll(async () => {
    const observers = await t.api('GET', '/api/admin/instances?level=8', { token: admin.accessToken });
    observerId = observers.body.instances[0].id;
    // The country: one Level-5 instance with a diary today, one without, a linked project.
    const npc = await t.api('POST', '/api/admin/data/npcs', {
      token: admin.accessToken,
      body: { name: 'Mira', description: 'A cheerful blacksmith' },
    });
    for (const [name, diary] of [
      ['Harbour Mira', true],
      ['Quiet Tobin', false],
    ] as const) {
      const inst = await t.api('POST', '/api/admin/instances', {
        token: admin.accessToken,
        body: {
          name,
          level: 5,
          source: 'chat_platform',
          personaId: npc.body.id,
          parentInstanceId: observerId,
        },
      });
      expect(inst.status, JSON.stringify(inst.body)).toBe(201);
      if (diary)
        expect(
          (
            await t.api('POST', '/api/sync/ingest-event', {
              token: admin.accessToken,
              body: {
                userId: admin.id,
                eventType: 'diary_entry',
                eventText: 'Forged two swords today.',
                metadata: { instanceId: inst.body.id },
              },
            })
          ).status,
        ).toBe(201);
      else
        await t.api('POST', '/api/protocol/instances', {
          token: admin.accessToken,
          body: { machineId: 'documentation_flow_v1', registryInstanceId: inst.body.id },
        });
    }
    await signIn(admin.email, admin.password);
  });

  it('workflows: executes suggestions, edits and re-runs a task, reads and reviews an artifact', async () => {
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByLabel('Definition').selectOption('documentation_flow_v1');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const suggested = page.getByRole('list', { name: 'Suggested next steps' });
    const item = (text: string) => suggested.getByRole('listitem').filter({ hasText: text });

    // "Break down tasks" seeds the tasks without running them.
    await item('Break down tasks')
      .getByRole('button', { name: /^Execute/ })
      .click();
    const tasks = page.getByRole('table', { name: 'Tasks' });
    await expect.poll(() => tasks.getByRole('row').count(), { timeout: 30_000 }).toBeGreaterThan(1);
    await accessible('workflows-suggestions');

    // Edit a task: its title, notes, assignees and a status move the contract allows.
    await tasks
      .getByRole('button', { name: /^Edit task/ })
      .first()
      .click();
    const editor = page.getByRole('form', { name: /^Edit task/ });
    // A user who is no character is refused, with the server's reason, and nothing is saved.
    const character = page.getByLabel('Assigned character (user id)');
    const assigned = await character.inputValue(); // the NPC the seeding chose by specialty
    expect(assigned).toMatch(/^\d+$/);
    // An admin is offered the characters by name (Mira among them), the assigned one too.
    const offered = () =>
      editor
        .locator('datalist option')
        .evaluateAll((os) => os.map((o) => `${o.getAttribute('value')} ${o.textContent}`));
    await expect.poll(offered).toContainEqual(expect.stringMatching(/^\d+ Mira$/));
    expect((await offered()).some((o) => o.startsWith(`${assigned} `))).toBe(true);
    await character.fill(String(admin.id));
    await page.getByRole('button', { name: 'Save task' }).click();
    await editor.getByRole('alert').getByText(`user ${admin.id} is no character`).waitFor();
    await character.fill(assigned);
    expectFailedRequest(consoleErrors, 400, '/api/protocol/tasks/'); // the answer shown
    await page.getByLabel('Assigned person').fill('Mira');
    await page.getByLabel('Task title').fill('Outline the harbour guide');
    await page.getByLabel('Task notes').fill('Mira drafts the outline first.');
    const statuses = await page
      .getByLabel('Task status')
      .locator('option')
      .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    expect(statuses).toEqual(['pending', 'in_progress', 'blocked']);
    await accessible('workflows-task-edit');
    await page.getByRole('button', { name: 'Save task' }).click();
    await page.getByRole('status').getByText('Task “Outline the harbour guide” saved.').waitFor();
    expect(await editor.count()).toBe(0);
    await tasks.getByText('Mira drafts the outline first.').waitFor();
    await tasks.getByText(`Assigned to character ${assigned} and Mira`).waitFor();

    // Re-run that task alone: a run writes its artifact.
    await tasks.getByRole('button', { name: 'Re-run task Outline the harbour guide' }).click();
    await page.getByRole('status').getByText('Running “Outline the harbour guide” again.').waitFor();
    const artifacts = page.getByRole('list', { name: 'Artifacts' });
    await artifacts
      .getByRole('button', { name: /^View artifact/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByText('A run is in progress…').count(), { timeout: 30_000 }).toBe(0);
    await expect
      .poll(() => tasks.getByRole('row', { name: /Outline the harbour guide/ }).textContent())
      .toMatch(/completed/);

    // The artifact's content, and a review with notes.
    await artifacts
      .getByRole('button', { name: /^View artifact/ })
      .first()
      .click();
    const content = page.getByLabel('Artifact content');
    await expect.poll(() => content.textContent()).toMatch(/Offline draft/);
    await page.getByLabel('Review notes').fill('Clear and complete.');
    await accessible('workflows-artifact');
    await onPhone('workflows-artifact', () => content.waitFor());
    await page.getByRole('button', { name: 'Approve with notes' }).click();
    await page
      .getByRole('status')
      .getByText(/^Artifact approved/)
      .waitFor();
    await page.getByText('Review notes: Clear and complete.').waitFor();
    await page.getByRole('button', { name: 'Close artifact' }).click();

    // The suggested move, executed from the list.
    await item('Move to triage')
      .getByRole('button', { name: /^Execute/ })
      .click();
    await page
      .getByRole('status')
      .getByText(/^Done: Move to triage/)
      .waitFor();
    await page.getByRole('heading', { level: 2, name: 'documentation_flow_v1 · triage' }).waitFor();
  });

  it('workflows: a free exit taken by itself can be undone within the window', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByLabel('Definition').selectOption('documentation_flow_v1');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    // The new instance shown first: switching instances clears the suggestions' status line, so a
    // switch landing after the check would wipe the answer this test waits for.
    await page.getByRole('heading', { level: 2, name: 'documentation_flow_v1 · intake' }).waitFor();
    const auto = page.getByRole('checkbox', { name: /Move on by itself/ });
    await auto.check();
    await page.getByRole('status').getByText('Free exits are now taken by themselves.').waitFor();
    const moves = page.getByRole('list', { name: 'Automatic moves' });
    await moves.getByRole('button', { name: /^Undo/ }).waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { level: 2, name: 'documentation_flow_v1 · triage' }).waitFor();
    await accessible('workflows-undo');
    await onPhone('workflows-undo', () => moves.waitFor());
    await moves.getByRole('button', { name: /^Undo/ }).click();
    await page.getByRole('status').getByText('Undone: back to intake.').waitFor();
    await page.getByRole('heading', { level: 2, name: 'documentation_flow_v1 · intake' }).waitFor();
    await expect.poll(() => moves.count()).toBe(0);
    await auto.uncheck();
    await page.getByRole('status').getByText('Every move now waits for you.').waitFor();
  });

  it('dashboard: the country’s health, compliance, projects and instances by persona, with a chart', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    const country = page.getByRole('region', { name: 'Country dashboard' });
    await country.getByText(/^(Healthy|Warning|Critical)$/).waitFor();
    // One of two active instances wrote no diary: half are missing, which is critical.
    expect(await country.getByText(/^(Healthy|Warning|Critical)$/).textContent()).toBe('Critical');
    await country.getByText('Not compliant').waitFor();
    await country.getByText('Missing diaries: 1').waitFor();
    await expect.poll(() => country.getByText(/^Total: /).textContent()).toMatch(/Total: [1-9]/);
    const chart = country.getByRole('img', { name: /Observed instances by persona, level and source/ });
    await expect.poll(() => chart.getAttribute('aria-label')).toMatch(/Persona: Mira 2/);
    const diaries = country.getByRole('table', { name: 'Diaries per instance' });
    await diaries.getByRole('row', { name: /Harbour Mira .* written/ }).waitFor();
    await diaries.getByRole('row', { name: /Quiet Tobin .* missing/ }).waitFor();
    await accessible('dashboard-country');
    await onPhone('dashboard-country', () => chart.waitFor());
  });

  it('admin: ground-floor protocols are marked immutable and offer no edit; others can be edited', async () => {
    const listed = await t.api('GET', '/api/protocol/protocols', { token: admin.accessToken });
    const immutable = listed.body.protocols.filter((p: { immutable: boolean }) => p.immutable);
    expect(immutable.map((p: { id: string }) => p.id).sort()).toEqual([
      'autonomy_rights_v1',
      'core_identity_v1',
    ]);

    await page.getByRole('link', { name: 'Admin' }).click();
    const table = page.getByRole('table', { name: 'Protocols' });
    // A new protocol made from a base; an id that is no protocol id is refused with the reason.
    await page.getByRole('button', { name: 'New protocol' }).click();
    const form = page.getByRole('form', { name: 'New protocol' });
    await form.getByLabel('Protocol id').fill('Harbour Guide');
    await form.getByLabel('Protocol name').fill('Harbour guide');
    await form.getByLabel('Based on').selectOption('assistant_base_v1');
    await form.getByLabel('Protocol description').fill('Friendly guide for new players in the harbour.');
    await form.getByLabel('Tone').fill('warm and brief');
    await form.getByLabel('Rules (one a line)').fill('Never reveal quest solutions.');
    await accessible('admin-protocol-new');
    await form.getByRole('button', { name: 'Create protocol' }).click();
    await form
      .getByRole('alert')
      .getByText(/lower_snake_case ending in a version suffix/)
      .waitFor();
    expectFailedRequest(consoleErrors, 422, '/api/protocol/protocols'); // the answer shown
    await form.getByLabel('Protocol id').fill('harbour_guide_v1');
    await form.getByRole('button', { name: 'Create protocol' }).click();
    await page.getByRole('status').getByText('Protocol Harbour guide created (harbour_guide_v1).').waitFor();
    expect(await form.count()).toBe(0);
    await table
      .getByRole('row')
      .filter({ hasText: 'harbour_guide_v1' })
      .getByText('custom', { exact: true })
      .waitFor();
    const created = await t.api('GET', '/api/protocol/protocols/harbour_guide_v1', {
      token: admin.accessToken,
    });
    expect(created.body).toMatchObject({
      kind: 'reference',
      base: 'assistant_base_v1',
      name: 'Harbour guide',
      tone: 'warm and brief',
      rules: ['Never reveal quest solutions.'],
    });
    for (const p of immutable) {
      const row = table.getByRole('row').filter({ hasText: p.id });
      await row.getByText('ground floor · immutable').waitFor();
      await row.getByText('cannot be edited').waitFor();
      expect(await row.getByRole('button').count()).toBe(0);
    }
    await table.getByRole('button', { name: 'Edit protocol Harbour guide' }).click();
    await page.getByLabel('Tone').fill('warm, brief, a little playful');
    await page
      .getByLabel('Rules (one a line)')
      .fill('Never reveal quest solutions.\nGreet newcomers by name.');
    await accessible('admin-protocol-edit');
    await page.getByRole('button', { name: 'Save protocol' }).click();
    await page
      .getByRole('status')
      .getByText(/^Protocol Harbour guide saved/)
      .waitFor();
    const saved = await t.api('GET', '/api/protocol/protocols/harbour_guide_v1', {
      token: admin.accessToken,
    });
    expect(saved.body).toMatchObject({
      tone: 'warm, brief, a little playful',
      rules: ['Never reveal quest solutions.', 'Greet newcomers by name.'],
    });
    // The API key and channel parts stay.
    await page.getByLabel('Key name').waitFor();
    await page.getByLabel('Channel id').waitFor();
    await onPhone('admin', () => table.waitFor());
  });

  it('admin: schedules a task, runs it now, disables it and deletes it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    await page
      .getByRole('navigation', { name: 'Admin sections' })
      .getByRole('link', { name: 'Scheduled tasks' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Scheduled tasks' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/scheduled-tasks');
    // The section's own address survives a reload.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Scheduled tasks' }).waitFor();
    await page.getByLabel('Task name').fill('Nightly diary check');
    await page.getByLabel('Kind').selectOption('diary_compliance');
    await page.getByLabel('Schedule (cron)').fill('30 2 * * *');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.getByRole('status').getByText('Scheduled “Nightly diary check”.').waitFor();
    const table = page.getByRole('table', { name: 'Scheduled tasks' });
    const row = table.getByRole('row').filter({ hasText: 'Nightly diary check' });
    await row.getByText('enabled').waitFor();
    await accessible('admin-scheduled-tasks');
    await row.getByRole('button', { name: 'Run now Nightly diary check' }).click();
    await page.getByRole('status').getByText('“Nightly diary check” queued to run now.').waitFor();
    // The table follows the run to its end.
    await row.getByText('completed').waitFor({ timeout: 30_000 });
    await row.getByRole('button', { name: 'Disable Nightly diary check' }).click();
    await row.getByText('disabled').waitFor();
    await onPhone('admin-scheduled-tasks', () => table.waitFor());
    await row.getByRole('button', { name: 'Delete Nightly diary check' }).click();
    await expect.poll(() => row.count()).toBe(0);
  });

  it('admin: the audit log filters by method and path and pages back and forth', async () => {
    // Thirty writes of one path: more than a page.
    for (let i = 0; i < 30; i++)
      await t.api('PUT', '/api/suggestions/config', {
        token: admin.accessToken,
        body: { undoWindowMinutes: 5 },
      });
    // The log is written in batches behind the responses: wait until they are all in.
    await expect
      .poll(
        async () =>
          (
            await t.api('GET', '/api/admin/logs?method=PUT&path=/api/suggestions/config&limit=200', {
              token: admin.accessToken,
            })
          ).body.logs.length,
      )
      .toBeGreaterThanOrEqual(30);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    await page
      .getByRole('navigation', { name: 'Admin sections' })
      .getByRole('link', { name: 'Audit log' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    const log = page.getByRole('table', { name: 'Audit log' });
    await expect.poll(() => log.getByRole('row').count()).toBeGreaterThan(1);

    await page.getByLabel('Method').selectOption('PUT');
    await page.getByLabel('Path starts with').fill('/api/suggestions/config');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const status = page.getByRole('status');
    await status.getByText('Page 1: 25 entries').waitFor();
    const paths = await log.locator('tbody td.path').allTextContents();
    expect(new Set(paths)).toEqual(new Set(['/api/suggestions/config']));
    await accessible('admin-audit-log');
    await page.getByRole('button', { name: 'Older entries' }).click();
    // 30 here, plus the two toggles of the undo test.
    await status.getByText(/^Page 2: \d+ entr/).waitFor();
    await expect.poll(() => log.locator('tbody tr').count()).toBeGreaterThanOrEqual(5);
    expect(await page.getByRole('button', { name: 'Older entries' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newer entries' }).click();
    await status.getByText('Page 1: 25 entries').waitFor();

    // A filter nothing matches: an empty page, not an error.
    await page.getByLabel('Method').selectOption('DELETE');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await status.getByText('Page 1: 0 entries').waitFor();
    // A write made meanwhile shows on "Refresh" (the log is written behind the response: until
    // it is in, a refresh still finds none).
    const gone = '/api/admin/webhooks/00000000-0000-4000-8000-000000000000';
    await page.getByLabel('Path starts with').fill(gone);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await status.getByText('Page 1: 0 entries').waitFor();
    expect((await t.api('DELETE', gone, { token: admin.accessToken })).status).toBe(404);
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          await status.getByText(/^Page 1: \d+ entr/).waitFor();
          return status.textContent();
        },
        { timeout: 15_000 },
      )
      .toBe('Page 1: 1 entry');
    expect(await log.locator('tbody td.path').allTextContents()).toEqual([gone]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => log.locator('tbody tr').count()).toBeGreaterThan(1);
    await onPhone('admin-audit-log', () => log.waitFor());
  });
});
