// The default namespace's event maps (contract: "Real time"): what a client sends, with its ack,
// and what the server sends back. Socket.IO's typed Server/Socket check every emit against them.
import type { Problem } from '../../platform/http/problem.js';
import type { ChatErrorPayload, TurnEmitter } from './chat.types.js';

type Payload<K extends keyof TurnEmitter> = Parameters<TurnEmitter[K]>[0];

/** A turn's ack: its ids when answered, else the chatError payload it also emitted. */
export type ChatAck =
  { ok: true; conversationId: number; messageId: number } | { ok: false; error: ChatErrorPayload };

/** Client → server. Payloads are validated by the turn (bad ones answer chatError). */
export interface ChatClientEvents {
  chatMessage: (payload: unknown, ack?: (answer: ChatAck) => void) => void;
  directNpcMessage: (payload: unknown, ack?: (answer: ChatAck) => void) => void;
}

/** Server → client. */
export interface ChatServerEvents {
  assistantThinking: (e: Payload<'thinking'>) => void;
  assistantResponseDelta: (e: Payload<'delta'>) => void;
  assistantResponse: (e: Payload<'response'>) => void;
  assistantIdle: (e: Payload<'idle'>) => void;
  npcThinking: (e: Payload<'npcThinking'>) => void;
  directNpcResponse: (e: Payload<'directResponse'>) => void;
  /** A turn's failure carries its conversation and client message ids; the connection's own
   * (token_expired) carries none. */
  chatError: (e: ChatErrorPayload | Problem) => void;
}
