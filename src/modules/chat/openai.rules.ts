// The OpenAI-compatible door's pure parts (contract: "Doors for games"): which character a
// `model` names, the turn's message in an OpenAI `messages` list, and the answers, chunks and
// errors in OpenAI's shapes.
import type { Problem } from '../../platform/http/problem.js';

/** `assistant`, or `npc:<id>` (a character's user id). */
export type ModelTarget = { kind: 'assistant' } | { kind: 'npc'; npcUserId: number };

export function parseModel(model: string): ModelTarget | undefined {
  if (model === 'assistant') return { kind: 'assistant' };
  const m = /^npc:([1-9]\d{0,14})$/.exec(model);
  return m ? { kind: 'npc', npcUserId: Number(m[1]) } : undefined;
}

export const modelName = (t: ModelTarget) => (t.kind === 'assistant' ? 'assistant' : `npc:${t.npcUserId}`);

export interface OpenAiMessage {
  role: string;
  content?: string | { type: string; text?: string | undefined }[] | null | undefined;
}

/** The text of the last message, when it is the user's: its string, or its text parts joined.
 * Undefined when the last message is not the user's or holds no text. The service keeps the
 * conversation itself (its history, memories and system prompt), so the earlier messages, the
 * caller's system message included, are not the turn's. */
export function turnText(messages: OpenAiMessage[]): string | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'user') return undefined;
  const text =
    typeof last.content === 'string'
      ? last.content
      : (last.content ?? [])
          .filter((p) => p.type === 'text' && typeof p.text === 'string')
          .map((p) => p.text)
          .join('\n');
  return text.trim() ? text : undefined;
}

/** OpenAI's error `type` for an HTTP status. */
export function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export interface OpenAiError {
  error: { message: string; type: string; param: string | null; code: string };
}

/** A problem+json as OpenAI's error object: the detail, the type for its status, the first
 * field at fault as `param` (without the part of the request it is in), the problem's code. */
export function openAiError(
  problem: Pick<Problem, 'status' | 'detail' | 'code'> & { errors?: unknown },
): OpenAiError {
  const first = Array.isArray(problem.errors)
    ? (problem.errors[0] as { path?: unknown } | undefined)
    : undefined;
  const path =
    typeof first?.path === 'string' ? first.path.replace(/^(body|chatMessage|directNpcMessage)\.?/, '') : '';
  const message =
    first && typeof (first as { message?: unknown }).message === 'string'
      ? `${problem.detail}: ${path ? `${path}: ` : ''}${(first as { message: string }).message}`
      : problem.detail;
  return { error: { message, type: errorType(problem.status), param: path || null, code: problem.code } };
}

export interface Reply {
  messageId: number;
  npcName: string;
  text: string;
  createdAt: string;
}

/** The replies of a turn as one assistant message: one reply's text, or several each under its
 * speaker's name. */
export function replyContent(replies: Reply[]): string {
  if (replies.length === 1) return replies[0]!.text;
  return replies.map((r) => `${r.npcName}: ${r.text}`).join('\n\n');
}

const seconds = (iso: string | undefined) => Math.floor((iso ? new Date(iso).getTime() : Date.now()) / 1000);

/** A whole answer (`chat.completion`). */
export function completion(model: string, messageId: number, replies: Reply[]) {
  return {
    id: `chatcmpl-${replies[0]?.messageId ?? messageId}`,
    object: 'chat.completion' as const,
    created: seconds(replies[0]?.createdAt),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: replyContent(replies), refusal: null },
        finish_reason: 'stop' as const,
        logprobs: null,
      },
    ],
  };
}

/** A streamed piece (`chat.completion.chunk`). */
export function chunk(
  id: string,
  model: string,
  created: number,
  delta: { role?: 'assistant'; content?: string },
  finishReason: 'stop' | null = null,
) {
  return {
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  };
}
