import type { AppPlugin } from '../../platform/http/types.js';
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
