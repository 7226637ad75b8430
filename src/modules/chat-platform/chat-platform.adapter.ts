// Whether a chat-platform bot runs: only with a token. Without one nothing is loaded (discord.js
// is imported lazily) and nothing connects.
import type { Logger } from 'pino';
import { ChatPlatformBot, type ChatPlatformTransport } from './chat-platform.bot.js';
import type { ChatPlatformChat } from './chat-platform.chat.js';
import type { ChatPlatformCommands } from './chat-platform.commands.js';
import { discordTransport } from './chat-platform.discord.js';

export type TransportFactory = (
  token: string,
  log: Logger,
  opts: { gateway: boolean },
) => Promise<ChatPlatformTransport>;

/** The bot for CHAT_PLATFORM_BOT_TOKEN, over Discord unless another transport is given; undefined
 * without a token. `gateway`: this node receives slash commands (and registers them) and messages. */
export async function createChatPlatformBot(o: {
  token: string | undefined;
  gateway: boolean;
  commands: ChatPlatformCommands;
  chat: ChatPlatformChat;
  log: Logger;
  transport?: TransportFactory;
}): Promise<ChatPlatformBot | undefined> {
  if (!o.token) return undefined;
  const transport = await (o.transport ?? discordTransport)(o.token, o.log, { gateway: o.gateway });
  return new ChatPlatformBot(transport, o.commands, o.chat, o.log);
}
