import type { Config } from '../../config.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { defineChatJobs } from './chat.jobs.js';
import { ChatService } from './chat.service.js';
import type { ChatServiceDeps } from './chat.types.js';
import type { ConversationsService } from './conversations.service.js';
import { conversationRoutes } from './conversations.routes.js';
import { toolRoutes } from './tools.routes.js';
import { toolApprover } from './chat.tools.approval.js';
import { previewRoutes } from './preview.routes.js';
import { turnRoutes } from './turns.routes.js';
import { openAiRoutes, type ModelDirectory } from './openai.routes.js';
import './chat.tables.js';

export { ConversationsService, presentMessage, type MessageRow } from './conversations.service.js';
export { messageSchema } from './chat.schemas.js';
export { ChatService } from './chat.service.js';
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

/** The module's HTTP door (mounted by app.ts): conversations, history, choices, the tool list and
 * the chat turn over HTTP (`POST /api/chat/turns`) and in OpenAI's shape (`/v1/*`); on sockets the turn runs on the main Socket.IO
 * namespace (`chatSockets`). */
export const chatPlugin: AppPlugin<{
  chat: ChatService;
  conversations: ConversationsService;
  characters: ModelDirectory;
}> = async (app, opts) => {
  conversationRoutes(app, opts);
  toolRoutes(app, opts);
  previewRoutes(app, opts);
  turnRoutes(app, opts);
  // The OpenAI-compatible door, in a context of its own: its errors leave in OpenAI's shape.
  await app.register(async (door) => openAiRoutes(door, opts));
};

/** Builds the chat service and defines its jobs (a document attached to chat is read and stored in
 * the background). `extractor` reads documents in a pool of its own: a turn never waits behind
 * a training job's long extraction. */
export function createChatModule(
  parts: Omit<ChatServiceDeps, 'assistantName'>,
  config: Pick<Config, 'limits' | 'assistantName' | 'toolApproval' | 'allowLoopbackTargetsForTests'>,
): ChatService {
  const { limits, toolApproval } = config;
  const chat = new ChatService(
    { ...parts, assistantName: config.assistantName },
    {
      messagesPerMinute: limits.chatPerMinute,
      toolCallsPerTurn: limits.chatToolCallsPerTurn,
      historyMessages: limits.chatHistoryMessages,
      attachmentTimeoutMs: limits.attachmentTimeoutMs,
      contextTokens: limits.chatContextTokens,
      toolApproval:
        toolApproval &&
        toolApprover(
          { ...toolApproval, allowLoopbackForTests: config.allowLoopbackTargetsForTests },
          parts.log,
        ),
    },
  );
  defineChatJobs(parts.jobs, {
    models: parts.models,
    memory: parts.memory,
    files: parts.files,
    log: parts.log,
    attachmentBytes: limits.attachmentBytes,
    attachmentTimeoutMs: limits.attachmentTimeoutMs,
  });
  return chat;
}
