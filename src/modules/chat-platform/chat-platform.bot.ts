// The chat-platform bot: the nine commands as slash commands, each interaction answered by the
// command service as the platform user who sent it; messages addressed to the bot answered as
// chat turns (chat-platform.chat.ts); and workflow notifications posted to the instance's channel. The platform itself is behind a transport (chat-platform.discord.ts for
// Discord), the one part that touches the network.
import type { Logger } from 'pino';
import { toProblem } from '../../platform/http/problem.js';
import type { WorkflowNotice } from '../workflows/index.js';
import type { ChatPlatformChat, IncomingMessage } from './chat-platform.chat.js';
import type { ChatPlatformCommands } from './chat-platform.commands.js';
import { commandByName } from './chat-platform.commands.rules.js';
import {
  interactionArgs,
  isDiscordId,
  slashCommand,
  type InteractionOption,
  type SlashCommand,
} from './chat-platform.discord.rules.js';
import { notificationText, problemText } from './chat-platform.messages.rules.js';

/** A slash command as the platform delivered it. */
export interface IncomingCommand {
  name: string;
  options: readonly InteractionOption[];
  platformUserId: string;
  channelId: string;
  guildId: string | null;
}

/** What the bot does with a message: the reply to post to it, or null for none; `typing` shows
 * that an answer is being written. */
export type MessageHandler = (m: IncomingMessage, typing: () => void) => Promise<string | null>;

/** What the bot needs of a chat platform. */
export interface ChatPlatformTransport {
  /** Connects; from then on each slash command is handed to `onCommand`, and the text it returns
   * is the reply; each message the bot can read is handed to `onMessage`, and the text it returns
   * is posted as a reply to that message, in its channel or thread. Registers `commands` as the
   * bot's slash commands. */
  start(
    commands: SlashCommand[],
    onCommand: (c: IncomingCommand) => Promise<string>,
    onMessage: MessageHandler,
  ): Promise<void>;
  /** Posts a message to a channel. */
  post(channelId: string, text: string): Promise<void>;
  stop(): Promise<void>;
}

export class ChatPlatformBot {
  constructor(
    private readonly transport: ChatPlatformTransport,
    private readonly commands: ChatPlatformCommands,
    private readonly chat: ChatPlatformChat,
    private readonly log: Logger,
  ) {}

  start(): Promise<void> {
    return this.transport.start(
      this.commands.definitions.map(slashCommand),
      (c) => this.answer(c),
      (m, typing) => this.chat.answer(m, typing),
    );
  }

  stop(): Promise<void> {
    return this.transport.stop();
  }

  /** The reply to a slash command: the command's `text`, or its refusal's. */
  async answer(c: IncomingCommand): Promise<string> {
    const def = commandByName(c.name);
    try {
      const answer = await this.commands.run(
        { kind: 'platformUser', platformUserId: c.platformUserId },
        {
          command: c.name,
          args: def ? interactionArgs(def, c.options) : {},
          channelId: c.channelId,
          guildId: c.guildId,
        },
      );
      return answer.text;
    } catch (err) {
      const problem = toProblem(err);
      if (problem.code === 'internal')
        this.log.error({ err, command: c.name }, 'chat-platform command failed');
      return typeof problem.text === 'string' ? problem.text : problemText(problem);
    }
  }

  /** The notification port (WorkflowPorts.notify): posts what the event tells a channel, in the
   * background; a failure is logged, never thrown. */
  notify(n: WorkflowNotice): void {
    if (!isDiscordId(n.channelId)) return;
    const text = notificationText(n);
    if (text === null) return;
    this.transport.post(n.channelId, text).catch((err: unknown) => {
      this.log.warn(
        { err, channelId: n.channelId, eventType: n.event.eventType },
        'chat-platform post failed',
      );
    });
  }
}
