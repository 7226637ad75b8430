// The default namespace's event maps (contract: "Real time"): what a client sends, with its ack,
// and what the server sends back, each payload the type of its zod schema (chat.schemas.ts).
// Socket.IO's typed Namespace/Socket check every emit against them; clients and tests use them
// as `Socket<ChatServerEvents, ChatClientEvents>` (socket.io-client).
import { z } from 'zod';
import { problemSchema, type Problem } from '../../platform/http/problem.js';
import type { ClientEventDocs, NamespaceDoc, ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import {
  assistantIdleEvent,
  assistantResponseDeltaEvent,
  assistantResponseEvent,
  assistantThinkingEvent,
  chatAckSchema,
  chatErrorEvent,
  chatMessageSchema,
  directNpcMessageSchema,
  directNpcResponseEvent,
  npcThinkingEvent,
} from './chat.schemas.js';

export type AssistantThinking = z.infer<typeof assistantThinkingEvent>;
export type AssistantResponseDelta = z.infer<typeof assistantResponseDeltaEvent>;
export type AssistantResponse = z.infer<typeof assistantResponseEvent>;
export type AssistantIdle = z.infer<typeof assistantIdleEvent>;
export type NpcThinking = z.infer<typeof npcThinkingEvent>;
export type DirectNpcResponse = z.infer<typeof directNpcResponseEvent>;
/** A turn's chatError: the problem plus the ids the client needs to match it to its message. */
export type ChatErrorPayload = z.infer<typeof chatErrorEvent> & Problem;
/** A turn's ack: its ids when answered, else the chatError payload it also emitted. */
export type ChatAck = z.infer<typeof chatAckSchema>;

/** Client → server. The server validates each payload (a bad one answers chatError). */
export interface ChatClientEvents {
  chatMessage: (payload: z.input<typeof chatMessageSchema>, ack?: (answer: ChatAck) => void) => void;
  directNpcMessage: (
    payload: z.input<typeof directNpcMessageSchema>,
    ack?: (answer: ChatAck) => void,
  ) => void;
}

/** Server → client. */
export interface ChatServerEvents {
  assistantThinking: (e: AssistantThinking) => void;
  assistantResponseDelta: (e: AssistantResponseDelta) => void;
  assistantResponse: (e: AssistantResponse) => void;
  assistantIdle: (e: AssistantIdle) => void;
  npcThinking: (e: NpcThinking) => void;
  directNpcResponse: (e: DirectNpcResponse) => void;
  /** A turn's failure carries its conversation and client message ids; the connection's own
   * (token_expired, sent by platform/realtime/socket-server.ts) carries none. */
  chatError: (e: ChatErrorPayload | Problem) => void;
}

const at = '2025-05-01T09:30:00.000Z';

/** The default namespace's events in words and by example (the AsyncAPI document and `/docs`). */
export const chatServerEventDocs = {
  assistantThinking: {
    summary: 'A turn started: the model is being asked',
    description:
      'Sent once per turn after the message was accepted and stored, before the first model call: show a typing indicator for the conversation.',
    payload: assistantThinkingEvent,
    example: { conversationId: 12 },
  },
  assistantResponseDelta: {
    summary: "A piece of a reply's text, as the model writes it",
    description:
      'Sent while a reply streams (`preferences.stream`, on by default). `messageId` is the id the reply will be stored with: append each `delta` to that message. The suggested-replies block is never streamed, and group scenes do not stream.',
    payload: assistantResponseDeltaEvent,
    example: { conversationId: 12, messageId: 345, delta: 'Good morning' },
  },
  assistantResponse: {
    summary: 'One reply, whole and stored',
    description:
      'Sent for each reply once it is stored: the assistant, or in a conversation with NPCs each character who answers (`npcUserId`, `npcName`). Replaces the streamed text of the same `messageId`.',
    payload: assistantResponseEvent,
    example: {
      conversationId: 12,
      messageId: 345,
      npcUserId: 1,
      npcName: 'Assistant',
      text: 'Good morning! How did the trip go?',
      createdAt: at,
    },
  },
  assistantIdle: {
    summary: 'The turn is over',
    description:
      'Sent after the last reply of a turn (the exchange has been stored as a memory); the acknowledgement follows.',
    payload: assistantIdleEvent,
    example: { conversationId: 12 },
  },
  npcThinking: {
    summary: 'A direct message to an NPC is being answered',
    description: 'The first event of a `directNpcMessage` turn.',
    payload: npcThinkingEvent,
    example: { npcUserId: 7 },
  },
  directNpcResponse: {
    summary: "The NPC's reply to a direct message",
    description:
      "Stored in the caller's default conversation with the NPC's id; the acknowledgement follows.",
    payload: directNpcResponseEvent,
    example: {
      npcUserId: 7,
      npcName: 'Mira',
      messageId: 346,
      text: 'The forge is cold today.',
      createdAt: at,
    },
  },
  chatError: {
    summary: 'A turn failed or was refused, or the connection ends',
    description:
      "A turn's problem+json (`validation_failed` with every bad field, `rate_limited` with `retryAfter`, `not_found` for another user's conversation, a model failure) with the `conversationId` and `clientMessageId` it concerns: resend the same `clientMessageId` to retry. Also the connection's own, without ids: `token_expired` when the access token expires and `unauthenticated` when the account or its session ends; the server then disconnects (reconnect with a fresh token).",
    payload: z.union([chatErrorEvent, problemSchema]),
    example: {
      type: '/problems/rate_limited',
      title: 'Too many requests',
      status: 429,
      detail: 'Too many messages; retry in 20 s',
      code: 'rate_limited',
      retryAfter: 20,
      conversationId: 12,
      clientMessageId: 'c0ffee-1',
    },
  },
} satisfies ServerEventDocs<ChatServerEvents>;

export const chatClientEventDocs = {
  chatMessage: {
    summary: 'Send a message to the assistant (or to the characters of a conversation)',
    description:
      "Runs one turn: `assistantThinking`, then `assistantResponseDelta` pieces, `assistantResponse` for each reply and `assistantIdle`; or `chatError`. Without `conversationId` the default conversation with the assistant is used. A repeated `clientMessageId` is answered again from the stored replies without a model call. `channelId` names the chat-platform channel (or a named channel of the client) the turn comes from: routing applies the protocol configured for it (POST /api/chat-platform/channel/config) before the rules of the account, except for a `core_primary` account; a channel without configuration routes as none. Images come as `attachmentUrls`, `imageBase64Array` or the files of an `uploadContextId` (POST /api/files/upload); that upload's PDF, DOCX and text files are read before the turn, their passages that bear most on the message (8,000 characters for all) go into the system prompt, and their text is stored as `document_ingestion` memories (metadata `fileContext`). A file that cannot be read within ATTACHMENT_TIMEOUT_MS or holds no text refuses the message with `chatError` `validation_failed` naming it on `chatMessage.uploadContextId` (415 `unsupported_media_type` for a type no reader takes). Nothing is stored for a refused message.",
    payload: chatMessageSchema,
    example: {
      message: 'Good morning! I just got back from the coast.',
      clientMessageId: 'c0ffee-1',
      conversationId: 12,
      channelId: 'support',
      preferences: { language: 'en', responseLength: 'short', stream: true },
    },
    ack: {
      description:
        'Called once the turn is over (after `assistantIdle`): `{ ok: true, conversationId, messageId }` with the id of the stored user message, or `{ ok: false, error }` with the chatError payload.',
      payload: chatAckSchema,
      example: { ok: true, conversationId: 12, messageId: 344 },
    },
  },
  directNpcMessage: {
    summary: 'Talk to one NPC directly',
    description:
      "Bypasses the director: `npcThinking`, then `directNpcResponse` from that character, stored in the caller's default conversation; or `chatError`.",
    payload: directNpcMessageSchema,
    example: { npcUserId: 7, message: 'Is the forge lit?', clientMessageId: 'c0ffee-2' },
    ack: {
      description: '`{ ok: true, conversationId, messageId }` once answered, or `{ ok: false, error }`.',
      payload: chatAckSchema,
      example: { ok: true, conversationId: 12, messageId: 347 },
    },
  },
} satisfies ClientEventDocs<ChatClientEvents>;

/** The default namespace for the AsyncAPI document. */
export const chatNamespaceDoc: NamespaceDoc = {
  namespace: '/',
  key: 'chat',
  title: 'Chat',
  description:
    'The main namespace: one turn per `chatMessage`, answered by events on the same socket. Connect with `auth: { token }` (an access token); a missing or bad token fails the connection with `connect_error` whose `data` is a problem object. A role change applies to connected sockets at once.',
  auth: z.object({ token: z.string().describe('an access token') }),
  authExample: { token: 'eyJhbGciOiJIUzI1NiJ9.…' },
  emits: chatServerEventDocs,
  receives: chatClientEventDocs,
};
