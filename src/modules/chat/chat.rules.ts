// Pure rules of the chat turn: preferences → prompt and token budget, suggested replies carried
// in the model's answer, the group-chat director's structured reply, and inline images decoded.
import { z } from 'zod';
import type { UserPreferences } from './chat.schemas.js';

const TOKENS = { short: 200, medium: 500, long: 1200 } as const;

export function maxTokensFor(prefs: UserPreferences | undefined): number {
  return TOKENS[prefs?.responseLength ?? 'medium'];
}

export function lengthInstruction(prefs: UserPreferences | undefined): string {
  switch (prefs?.responseLength ?? 'medium') {
    case 'short':
      return 'Answer in one to three sentences.';
    case 'medium':
      return 'Answer in a short paragraph.';
    case 'long':
      return 'Answer thoroughly, in several paragraphs when useful.';
  }
}

/** Asked of the model at the end of its answer; stripped before the answer is shown. */
export const CHOICES_INSTRUCTION =
  'After your answer, on a new line, suggest up to three short replies the player could send next, as ' +
  '<choices>["first reply","second reply"]</choices>. Nothing may follow the closing tag.';

const CHOICES_RE = /<choices>([\s\S]*?)(<\/choices>|$)/i;

/** Splits the model's text into the answer and its suggested replies. */
export function extractChoices(text: string): { text: string; choices: string[] } {
  const m = CHOICES_RE.exec(text);
  if (!m) return { text: text.trim(), choices: [] };
  const answer = (text.slice(0, m.index) + text.slice(m.index + m[0].length)).trim();
  let raw: unknown;
  try {
    raw = JSON.parse(m[1]!.trim());
  } catch {
    raw = m[1]!
      .split(/\n|\|/)
      .map((s) => s.replace(/^[-*\d.)\s"]+|["\s]+$/g, ''))
      .filter(Boolean);
  }
  const choices = Array.isArray(raw)
    ? raw
        .filter((c): c is string => typeof c === 'string')
        .map((c) => c.trim())
        .filter((c) => c.length > 0 && c.length <= 200)
        .slice(0, 3)
    : [];
  return { text: answer, choices };
}

/** Streaming: passes text through but holds back anything from `<choices>` on, so clients never
 * see the block. A partial `<cho…` at the end of a delta is held until it is decided. */
export class ChoicesFilter {
  private held = '';
  private inBlock = false;

  push(delta: string): string {
    if (this.inBlock) return '';
    const text = this.held + delta;
    const at = text.toLowerCase().indexOf('<choices>');
    if (at >= 0) {
      this.inBlock = true;
      this.held = '';
      return text.slice(0, at);
    }
    // Hold back a tail that could be the start of the tag.
    const lt = text.lastIndexOf('<');
    if (lt >= 0 && '<choices>'.startsWith(text.slice(lt).toLowerCase())) {
      this.held = text.slice(lt);
      return text.slice(0, lt);
    }
    this.held = '';
    return text;
  }

  /** Whatever is held and turned out not to be the tag. */
  flush(): string {
    const rest = this.inBlock ? '' : this.held;
    this.held = '';
    return rest;
  }
}

export interface Npc {
  id: number;
  name: string;
  description: string;
}

export interface DirectorReply {
  responses: { npcUserId: number; text: string }[];
  choices: string[];
}

export function directorInstruction(npcs: Npc[]): string {
  const cast = npcs
    .map((n) => `- id ${n.id}: ${n.name}${n.description ? ` (${n.description})` : ''}`)
    .join('\n');
  return [
    'You direct a group conversation between the player and these characters:',
    cast,
    'Decide which character or characters answer the player (usually one, several only when it fits), and write their replies in their own voices.',
    'Reply with JSON only, exactly of this form: {"responses":[{"npcUserId":<id>,"text":"<reply>"}],"choices":["<a short reply the player could send next>"]}',
  ].join('\n');
}

const directorSchema = z.object({
  responses: z.array(z.object({ npcUserId: z.coerce.number().int(), text: z.string().trim().min(1) })).min(1),
  choices: z.array(z.string()).optional(),
});

/** The director's structured answer; replies from characters not in the conversation are dropped.
 * A model that ignored the format still gets heard: its text becomes the first character's reply. */
export function parseDirectorReply(text: string, npcs: Npc[]): DirectorReply {
  const ids = new Set(npcs.map((n) => n.id));
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (json) {
    try {
      const parsed = directorSchema.safeParse(JSON.parse(json));
      if (parsed.success) {
        const responses = parsed.data.responses.filter((r) => ids.has(r.npcUserId));
        if (responses.length > 0)
          return {
            responses,
            choices: (parsed.data.choices ?? [])
              .map((c) => c.trim())
              .filter(Boolean)
              .slice(0, 3),
          };
      }
    } catch {
      // not JSON after all: fall through
    }
  }
  const { text: answer, choices } = extractChoices(text);
  return { responses: [{ npcUserId: npcs[0]!.id, text: answer || '…' }], choices };
}

/** Decodes a client's base64 image (plain or data: URL). Returns null when it is not base64. */
export function decodeBase64Image(value: string): Buffer | null {
  const body = value.startsWith('data:') ? value.slice(value.indexOf(',') + 1) : value;
  const clean = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length === 0) return null;
  return Buffer.from(clean, 'base64');
}
