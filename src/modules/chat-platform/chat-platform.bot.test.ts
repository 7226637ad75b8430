// The chat-platform bot on the real app and database, over an in-process transport standing in
// for Discord (no network): it registers the nine slash commands, answers each as the linked
// account of the Discord user who sent it, and posts workflow notifications to the instance's
// channel. Without a token there is no bot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import {
  createChatPlatformBot,
  type ChatPlatformBot,
  type ChatPlatformTransport,
  type IncomingCommand,
} from './index.js';
import { COMMANDS } from './chat-platform.commands.rules.js';
import { slashCommand, type SlashCommand } from './chat-platform.discord.rules.js';

/** Records what the bot registers and posts, and delivers commands as Discord would. */
class RecordingTransport implements ChatPlatformTransport {
  registered: SlashCommand[] = [];
  posts: { channelId: string; text: string }[] = [];
  stopped = false;
  private onCommand: ((c: IncomingCommand) => Promise<string>) | undefined;

  async start(commands: SlashCommand[], onCommand: (c: IncomingCommand) => Promise<string>) {
    this.registered = commands;
    this.onCommand = onCommand;
  }
  async post(channelId: string, text: string) {
    this.posts.push({ channelId, text });
  }
  async stop() {
    this.stopped = true;
  }
  send(c: Partial<IncomingCommand> & { name: string; platformUserId: string }): Promise<string> {
    return this.onCommand!({ options: [], channelId: CHANNEL, guildId: '200000000000000001', ...c });
  }
}

const CHANNEL = '300000000000000001';
const DISCORD_ADMIN = '400000000000000001';

let t: TestApp;
let admin: TestUser;
let transport: RecordingTransport;
let bot: ChatPlatformBot;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso');
  transport = new RecordingTransport();
  const made = await createChatPlatformBot({
    token: 'a-token',
    gateway: true,
    commands: t.deps.services.chatPlatformCommands,
    chat: t.deps.services.chatPlatformChat,
    log: t.deps.log,
    transport: async (token, _log, opts) => {
      expect([token, opts.gateway]).toEqual(['a-token', true]);
      return transport;
    },
  });
  bot = made!;
  await bot.start();
  t.deps.services.workflows.usePorts({
    notify: (n) => bot.notify(n),
    autoRunOrchestrator: async () => false,
  });
  const linked = await t.api('PUT', `/api/admin/chat-platform/users/${DISCORD_ADMIN}`, {
    token: admin.accessToken,
    body: { userId: admin.id },
  });
  expect(linked.status).toBe(201);
});
afterAll(async () => {
  t.deps.services.workflows.usePorts({ notify: undefined, autoRunOrchestrator: undefined });
  await bot.stop();
  await t.close();
});

describe('createChatPlatformBot', () => {
  it('makes no bot, and loads no transport, without a token', async () => {
    let made = 0;
    const none = await createChatPlatformBot({
      token: undefined,
      gateway: true,
      commands: t.deps.services.chatPlatformCommands,
      chat: t.deps.services.chatPlatformChat,
      log: t.deps.log,
      transport: async () => {
        made++;
        return new RecordingTransport();
      },
    });
    expect(none).toBeUndefined();
    expect(made).toBe(0);
  });

  it('registers the nine slash commands, built from the command definitions', () => {
    expect(transport.registered).toHaveLength(9);
    expect(transport.registered).toEqual(COMMANDS.map(slashCommand));
  });
});

describe('slash commands', () => {
  it('answer as the linked account, with the options named as Discord sends them', async () => {
    const created = await t.api('POST', '/api/protocol/instances', {
      token: admin.accessToken,
      body: { machineId: 'documentation_flow_v1', context: { title: 'From Discord' } },
    });
    const id = created.body.id;
    const text = await transport.send({
      name: 'observer-transition',
      platformUserId: DISCORD_ADMIN,
      options: [
        { name: 'instance_id', value: id },
        { name: 'target_state', value: 'triage' },
      ],
    });
    expect(text).toMatch(/^Moved to \*\*triage\*\*\.\nWorkflow "From Discord"/);
    const evidence = await transport.send({
      name: 'observer-evidence',
      platformUserId: DISCORD_ADMIN,
      options: [
        { name: 'instance_id', value: id },
        { name: 'description', value: 'A demo' },
        { name: 'proof_url', value: 'https://demo.example/' },
      ],
    });
    expect(evidence).toMatch(/^Evidence recorded: A demo/);
    const approve = await transport.send({
      name: 'observer-approve',
      platformUserId: DISCORD_ADMIN,
      options: [{ name: 'instance_id', value: id }],
    });
    expect(approve).toMatch(/Advanced automatically: triage → execution/);
  });

  it('answer a refusal with its text', async () => {
    expect(await transport.send({ name: 'observer-instance', platformUserId: '400000000000000099' })).toMatch(
      /^Forbidden: The platform user 400000000000000099 is not linked/,
    );
    expect(await transport.send({ name: 'observer-instance', platformUserId: DISCORD_ADMIN })).toBe(
      [
        'Validation failed: The arguments of /observer-instance are not valid',
        '- args.instance_id: required',
        'Usage: /observer-instance instance_id:<string>',
      ].join('\n'),
    );
    expect(
      await transport.send({
        name: 'observer-instance',
        platformUserId: DISCORD_ADMIN,
        options: [{ name: 'instance_id', value: '11111111-1111-4111-8111-111111111111' }],
      }),
    ).toBe('Not found: No such workflow instance');
    expect(await transport.send({ name: 'observer-gone', platformUserId: DISCORD_ADMIN })).toMatch(
      /^Validation failed: Unknown command observer-gone; the commands are \/observer-instance/,
    );
  });
});

describe('notifications', () => {
  it("post the instance's state changes, execution start and collected artifacts to its channel", async () => {
    transport.posts = [];
    const created = await t.api('POST', '/api/protocol/instances', {
      token: admin.accessToken,
      body: { machineId: 'documentation_flow_v1', channelId: CHANNEL, context: { title: 'Noisy' } },
    });
    const id: string = created.body.id;
    const call = (path: string, body: unknown) =>
      t.api('POST', `/api/protocol/instances/${id}/${path}`, { token: admin.accessToken, body });
    await call('transition', { targetState: 'triage' });
    await call('approvals', {});
    await call('evidence', { description: 'Demo', proofUrl: 'https://demo.example/' });
    await call('approvals', {});
    // Posted after commit, in the background: each post is recorded before its write answers,
    // since the recording transport posts synchronously.
    expect(transport.posts.every((p) => p.channelId === CHANNEL)).toBe(true);
    const tag = '[documentation_flow_v1] "Noisy"';
    expect(transport.posts.map((p) => p.text)).toEqual([
      `${tag}: created in **intake** (${id}).`,
      `${tag}: intake → **triage**.`,
      expect.stringMatching(/^\[documentation_flow_v1\] "Noisy": .* approved triage\.$/),
      `${tag}: triage → **execution** (automatic).`,
      `${tag}: execution starts in **execution**.`,
      `${tag}: evidence for execution: Demo <https://demo.example/>`,
      `${tag}: execution → **integration** (automatic).`,
      `${tag}: 0 artifact(s) collected in **integration**:`,
      expect.stringMatching(/^\[documentation_flow_v1\] "Noisy": .* approved integration\.$/),
      `${tag}: integration → **completed** (automatic).`,
      `${tag}: completed and archived.`,
    ]);
  });

  it('post nothing for an instance whose channel is not a Discord channel', async () => {
    transport.posts = [];
    const created = await t.api('POST', '/api/protocol/instances', {
      token: admin.accessToken,
      body: { machineId: 'documentation_flow_v1', channelId: 'web-channel' },
    });
    await t.api('POST', `/api/protocol/instances/${created.body.id}/transition`, {
      token: admin.accessToken,
      body: { targetState: 'triage' },
    });
    expect(transport.posts).toEqual([]);
  });
});
