// The CLI as an operator runs it: a child process, one JSON object on stdout, errors once (JSON on
// stdout, text on stderr only with --verbose), and `chat` driven through stdin/stdout against a
// real server answering through the fake model server. The commands on the database:
// cli.users.test.ts and cli.keys.test.ts (three files, so they run side by side).
import { afterAll, describe, expect, it } from 'vitest';
import { spawnService } from './child-process.js';
import { cliDatabase, type Run } from './cli-run.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createTestApp, createUser, type TestApp } from './harness.js';

const { env, cli, run } = cliDatabase();

// The server the chat tests talk to (answering through the fake model server): one for the file,
// started by the first that needs it.
let started: Promise<{ fake: FakeModelServer; t: TestApp }> | undefined;
const server = () =>
  (started ??= (async () => {
    const fake = await startFakeModelServer();
    return { fake, t: await createTestApp(fake.env()) };
  })());
afterAll(async () => {
  const s = await started;
  await s?.t.close();
  await s?.fake.close();
});

const COMMANDS = [
  'migrate',
  'users create',
  'users list',
  'users set-role',
  'api-keys create',
  'api-keys list',
  'api-keys revoke',
  'chat',
];

// Each test starts one or more child processes, each opening the database and checking its
// migrations: a generous failsafe for a busy machine, not a timing claim.
describe('cli', { timeout: 180_000 }, () => {
  it('--help: the list of commands, and each command with its options (exit 0, no database)', async () => {
    const all = await cli('--help');
    expect(all.code).toBe(0);
    for (const c of COMMANDS) expect(all.stdout).toContain(`  ${c}`);
    // Each command's help from the same command line in this process (the process is the list's).
    const runs: Run[] = [];
    for (const args of [...COMMANDS.map((c) => [...c.split(' '), '--help']), ['users', '-h']])
      runs.push(await run(...args));
    runs.slice(0, COMMANDS.length).forEach((r, i) => {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^npm run cli -- ${COMMANDS[i]}`));
      expect(r.stderr).toBe('');
    });
    // A group's help lists its commands.
    expect(runs.at(-1)!.stdout).toMatch(/users create[\s\S]*users list[\s\S]*users set-role/);
    expect(runs.at(-1)!.stdout).not.toContain('api-keys');
  });

  it('an error is printed once: JSON on stdout, text on stderr only with --verbose', async () => {
    const unknown = await cli('frobnicate');
    expect(unknown).toMatchObject({
      code: 2,
      out: { code: 'usage', error: 'unknown command: frobnicate (try --help)' },
    });
    expect(unknown.stdout.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toBe('');
    const verbose = await cli('frobnicate', '--verbose');
    expect(verbose.code).toBe(2);
    expect(verbose.out.code).toBe('usage');
    expect(verbose.stderr).toMatch(/^unknown command: frobnicate[\s\S]*usage: npm run cli --/);
    const badOption = await cli('users', 'list', '--colour', 'red');
    expect(badOption).toMatchObject({ code: 2, out: { code: 'usage' } });
    expect(badOption.out.error).toMatch(/--colour/);
  });

  it('chat: signs in, streams replies, lists the suggested replies and sends one by its number', async () => {
    const { fake, t } = await server();
    const user = await createUser(t, 'public', { name: 'Ada' });
    fake.replyChat({ text: 'Hello Ada! <choices>["Tell me a story","Goodbye"]</choices>' });
    const chat = spawnService('cli', ['chat', '--url', t.url, '--email', user.email], env);
    await chat.waitFor(/password: $/);
    chat.write(user.password);
    await chat.waitFor(/signed in as Ada/);
    await chat.waitFor(/you> $/);
    let from = chat.stdout.length;
    chat.write('hi there');
    await chat.waitFor(/assistant> Hello Ada!\n {2}1\) Tell me a story\n {2}2\) Goodbye\nyou> $/, 'stdout', {
      from,
    });

    fake.replyChat({ text: 'Once upon a time.' });
    from = chat.stdout.length;
    chat.write('1');
    await chat.waitFor(/assistant> Once upon a time\.\nyou> $/, 'stdout', { from });
    // The number sent the suggested reply's text.
    const last = fake.chatRequests().at(-1)!.body.messages.at(-1);
    expect(JSON.stringify(last.content)).toContain('Tell me a story');

    chat.write('/quit');
    await chat.waitFor(/bye\n$/);
    expect(await chat.exited).toBe(0);
    expect(chat.stderr).toBe('');
  });

  it('chat: a wrong password and an unreachable server are one JSON error each', async () => {
    const { t } = await server();
    const user = await createUser(t);
    const wrong = await cli('chat', '--url', t.url, '--email', user.email, '--password', 'not the password');
    expect(wrong).toMatchObject({ code: 1, out: { code: 'invalid_credentials' } });
    const down = await cli('chat', '--url', 'http://127.0.0.1:1', '--email', 'a@b.c', '--password', 'x');
    expect(down).toMatchObject({ code: 1, out: { code: 'server_unreachable' } });
  });
});
