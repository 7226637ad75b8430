// The default namespace's event maps (contract: "Real time"): what a client sends, with its ack,
// and what the server sends back, each payload the type of its zod schema (chat.schemas.ts).
// Socket.IO's typed Namespace/Socket check every emit against them; clients and tests use them
// as `Socket<ChatServerEvents, ChatClientEvents>` (socket.io-client).
import type { z } from 'zod';
import type { Problem } from '../../platform/http/problem.js';
import type {
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
