import type { Config } from '../../config.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { ChatPlatformChat, type ChatPlatformChatDeps } from './chat-platform.chat.js';
import { ChatPlatformCommands, type ChatPlatformCommandsDeps } from './chat-platform.commands.js';
import { chatPlatformRoutes, type ChatPlatformRoutesOptions } from './chat-platform.routes.js';
import './chat-platform.tables.js';

export { ChatPlatformService } from './chat-platform.service.js';
export { ChatPlatformCommands, type CommandCaller, type CommandAnswer } from './chat-platform.commands.js';
export {
  ChatPlatformBot,
  type ChatPlatformTransport,
  type IncomingCommand,
  type MessageHandler,
} from './chat-platform.bot.js';
export { ChatPlatformChat, type IncomingMessage } from './chat-platform.chat.js';
export { createChatPlatformBot, type TransportFactory } from './chat-platform.adapter.js';

/** The module's HTTP door (mounted by app.ts): channel configuration, commands, linked users. */
export const chatPlatformPlugin: AppPlugin<ChatPlatformRoutesOptions> = async (app, opts) =>
  chatPlatformRoutes(app, opts);

/** Builds what a platform user reaches: the commands, which run the workflow operations as the
 * caller or as the account a platform user is linked to (`actorOf`: its rights as they are now),
 * and the chat that answers their messages. The channel configuration (`chatPlatform`) is built
 * before, as protocol routing reads it. */
export function createChatPlatformModule(
  parts: ChatPlatformCommandsDeps & Omit<ChatPlatformChatDeps, 'adminUserIds'>,
  config: Pick<Config, 'adminUserIds'>,
) {
  const { chatPlatform } = parts;
  const chatPlatformCommands = new ChatPlatformCommands({
    chatPlatform,
    workflows: parts.workflows,
    workflowTasks: parts.workflowTasks,
    workflowRuns: parts.workflowRuns,
    actorOf: (id) => parts.actorOf(id),
  });
  const chatPlatformChat = new ChatPlatformChat({
    chat: parts.chat,
    chatPlatform,
    counters: parts.counters,
    log: parts.log,
    accountState: parts.accountState,
    adminUserIds: config.adminUserIds,
  });
  return { chatPlatformCommands, chatPlatformChat };
}
