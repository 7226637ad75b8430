// A chat turn outside Socket.IO (the HTTP doors: POST /api/chat/turns and the OpenAI-shaped
// /v1/chat/completions): the turn's emitter written as Server-Sent Events named like the socket's
// events, or collected for one answer when the turn is over. The turn is the socket's own
// (ChatService.handleMessage / handleDirectNpcMessage: the same limits, idempotency and errors).
import type { Writable } from 'node:stream';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { AppError, toProblem } from '../../platform/http/problem.js';
import type { ChatErrorPayload, ChatServerEvents } from './chat.events.js';
import type { ChatService } from './chat.service.js';
import { ChatTurnError, type TurnEmitter } from './chat.types.js';

/** One event of a turn, named as the socket names it. */
export interface TurnEvent {
  event: keyof ChatServerEvents | 'ack';
  data: unknown;
}

/** An emitter that hands each event, named as the socket's, to `on`. */
export function namedEmitter(on: (e: TurnEvent) => void): TurnEmitter {
  return {
    thinking: (data) => on({ event: 'assistantThinking', data }),
    delta: (data) => on({ event: 'assistantResponseDelta', data }),
    response: (data) => on({ event: 'assistantResponse', data }),
    idle: (data) => on({ event: 'assistantIdle', data }),
    npcThinking: (data) => on({ event: 'npcThinking', data }),
    directResponse: (data) => on({ event: 'directNpcResponse', data }),
  };
}

/** One Server-Sent Event (JSON has no raw newline, so `data` is one line). */
export function sseFrame(e: { event?: string; data: unknown }): string {
  return `${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`;
}

/** Writes to a stream whose reader may be gone: the turn goes on (and is stored) without it. */
export function safeWriter(out: Writable): (chunk: string) => void {
  return (chunk) => {
    if (!out.writableEnded && !out.destroyed) out.write(chunk);
  };
}

export type TurnKind = 'message' | 'direct';

/** Runs one turn with `emit`; a failure comes back as the chatError payload (logged when it is
 * not the turn's own). */
export async function runTurn(
  chat: ChatService,
  log: { error(obj: object, msg: string): void },
  user: UserPrincipal,
  kind: TurnKind,
  raw: unknown,
  emit: TurnEmitter,
): Promise<{ ok: true; conversationId: number; messageId: number } | { ok: false; error: ChatErrorPayload }> {
  try {
    const ids =
      kind === 'direct'
        ? await chat.handleDirectNpcMessage(user, raw, emit)
        : await chat.handleMessage(user, raw, emit);
    return { ok: true, ...ids };
  } catch (err) {
    if (err instanceof ChatTurnError) return { ok: false, error: err.problem };
    log.error({ err }, 'chat turn failed');
    return { ok: false, error: { ...toProblem(err), conversationId: null, clientMessageId: null } };
  }
}

/** A chatError payload as the error an HTTP route throws (problem+json with its status, and
 * Retry-After when it is a rate limit). */
export function turnFailure(problem: ChatErrorPayload): AppError {
  const { type: _type, title: _title, status: _status, detail, code, ...extensions } = problem;
  const retry: Record<string, string> =
    typeof problem.retryAfter === 'number' ? { 'retry-after': String(problem.retryAfter) } : {};
  return new AppError(code, detail, extensions, retry);
}
