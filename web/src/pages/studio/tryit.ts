// "Try it"'s pure rules (table-tested in tryit.test.ts): the chat log moved on by the socket's
// events, the preview request for a turn, and the fields other servers add (a memory's score and
// owner, a reply's token usage), read when present and left out when not.
import type { Schemas } from '../../api/client';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}
export interface Line {
  key: string;
  role: 'user' | 'assistant';
  text: string;
  who?: string;
  pending?: boolean;
  usage?: Usage;
}

export type Mode = 'direct' | 'scene';

/** A streamed piece of the reply `messageId`: appended to its line, or its first line. */
export function addDelta(lines: Line[], messageId: number, delta: string): Line[] {
  const key = `m${messageId}`;
  const at = lines.findIndex((l) => l.key === key);
  if (at < 0) return [...lines, { key, role: 'assistant', text: delta, pending: true }];
  const copy = lines.slice();
  copy[at] = { ...copy[at]!, text: copy[at]!.text + delta };
  return copy;
}

/** A stored reply: it replaces its streamed line (or is added), with its speaker and usage. */
export function addReply(
  lines: Line[],
  reply: { messageId: number; text: string; npcName?: string | null; usage?: unknown },
): Line[] {
  const key = `m${reply.messageId}`;
  const usage = usageOf(reply.usage);
  const line: Line = {
    key,
    role: 'assistant',
    text: reply.text,
    ...(reply.npcName ? { who: reply.npcName } : {}),
    ...(usage ? { usage } : {}),
  };
  const at = lines.findIndex((l) => l.key === key);
  if (at < 0) return [...lines, line];
  const copy = lines.slice();
  copy[at] = line;
  return copy;
}

/** A reply's token usage, if the server sent a well-formed one. */
export function usageOf(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const { inputTokens, outputTokens } = u as Record<string, unknown>;
  return typeof inputTokens === 'number' && typeof outputTokens === 'number'
    ? { inputTokens, outputTokens }
    : undefined;
}

/** The preview of a turn: the chosen player's, with the character. The scene's conversation is
 * the admin's own, so it goes along only when the player is the admin; `direct` only for a direct
 * message (a server that does not know it refuses it, and the page asks again without). */
export function previewRequest(p: {
  playerId: number;
  meId: number;
  npcId: number;
  message: string;
  mode: Mode;
  conversationId: number | null;
}): Record<string, unknown> & { userId: number } {
  return {
    userId: p.playerId,
    npcUserId: p.npcId,
    ...(p.message.trim() ? { message: p.message } : {}),
    ...(p.mode === 'scene' && p.conversationId !== null && p.playerId === p.meId
      ? { conversationId: p.conversationId }
      : {}),
    ...(p.mode === 'direct' ? { direct: true } : {}),
  };
}

export type PreviewMemory = Schemas['PromptPreview']['memories'][number];

/** Who a retrieved memory belongs to, in words. */
export function ownerOf(m: PreviewMemory, npcs: { id: number; name: string }[]): string {
  if (m.owner === null) return 'the world';
  return m.owner.name || npcs.find((n) => n.id === m.owner!.id)?.name || `user ${m.owner.id}`;
}

/** What the context budget dropped, in words: `part: n` in the server's order, or none. */
export function droppedText(dropped: Record<string, number> | undefined): string {
  const parts = Object.entries(dropped ?? {}).filter(([, n]) => n > 0);
  return parts.length ? parts.map(([k, n]) => `${k}: ${n}`).join(', ') : 'nothing';
}
