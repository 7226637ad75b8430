import type { AppPlugin } from '../../platform/http/types.js';
import type { ChatService } from './chat.service.js';
import type { ConversationsService } from './conversations.service.js';
import { conversationRoutes } from './conversations.routes.js';
import { toolRoutes } from './tools.routes.js';
import { previewRoutes } from './preview.routes.js';
import './chat.tables.js';

export { ConversationsService, presentMessage, type MessageRow } from './conversations.service.js';
export { messageSchema } from './chat.schemas.js';
export { ChatService } from './chat.service.js';
export { defineChatJobs } from './chat.jobs.js';
export { systemKnowledge } from './chat.knowledge.js';
export { chatSockets } from './chat.socket.js';
export { chatNamespaceDoc } from './chat.events.js';
export type {
  AssistantIdle,
  AssistantResponse,
  AssistantResponseDelta,
  AssistantThinking,
  ChatAck,
  ChatClientEvents,
  ChatErrorPayload,
  ChatServerEvents,
  DirectNpcResponse,
  NpcThinking,
} from './chat.events.js';
export type { PersonaSessionPort, TurnEmitter, TurnPersona } from './chat.types.js';
export { ChatTurnError } from './chat.types.js';

/** The module's HTTP door (mounted by app.ts): conversations, history, choices and the tool list;
 * the chat turn itself runs on the main Socket.IO namespace (`chatSockets`). */
export const chatPlugin: AppPlugin<{ chat: ChatService; conversations: ConversationsService }> = async (
  app,
  opts,
) => {
  conversationRoutes(app, opts);
  toolRoutes(app, opts);
  previewRoutes(app, opts);
};
