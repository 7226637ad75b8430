// Pure training rules (contract: "Training (admin)"): verbatim slicing of texts, the file types
// accepted, text normalisation and truncation, the grouping of chunks into synthesis calls, the
// belief rules ("I " form, length, deduplication), offline extraction, the simulation's turns, and
// the job's progress figures.
import { jsonObjectIn } from '../../platform/models/json-answer.js';
import { looksLikeText } from '../files/index.js';

/** `ingest-text` and `ingest-text-by-heart`: largest text, bytes (256 KiB). */
export const TEXT_MAX_BYTES = 256 * 1024;
/** A by-heart part: at most this many characters (UTF-16 code units; a pair is never split). */
export const BY_HEART_PART_CHARS = 2000;
export const BY_HEART_TITLE_CHARS = 200;
/** Synthesis: characters per chunk, chunks per model call, beliefs per call. */
export const SYNTHESIS_CHUNK_CHARS = 3000;
export const CHUNKS_PER_CALL = 4;
export const BELIEFS_PER_GROUP = 20;
export const BELIEF_MAX_CHARS = 400;
/** Offline extraction: a sentence of at least this many words becomes a belief. */
export const OFFLINE_MIN_WORDS = 4;
/** Screenshots: the OCR languages shipped with the service, and the largest image. */
export const SHIPPED_LANGUAGES = ['eng', 'fra'] as const;
export type OcrLanguage = (typeof SHIPPED_LANGUAGES)[number];
export const MAX_IMAGE_PIXELS = 40_000_000;
/** Simulation limits. */
export const TOPIC_MAX_CHARS = 500;
export const MAX_SIMULATION_TURNS = 20;
export const DEFAULT_SIMULATION_TURNS = 6;

// -------------------------------------------------------------------------------------------------
// Verbatim slices

/** Where a slice may end, most preferred first: after a blank line, after a sentence end (with the
 * spaces that follow it), after a space. Each regex matches the separator; the cut is after it. */
const PARAGRAPH = /\n[^\S\n]*\n\s*/g;
const SENTENCE = /[.!?…]["'”’»)\]]*\s+/g;
const SPACE = /\s+/g;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** The end of the last match of `re` in `window` that lies at or after `min` (0 when none). */
function lastCut(window: string, re: RegExp, min: number): number {
  let cut = 0;
  for (const m of window.matchAll(re)) {
    const end = m.index + m[0].length;
    if (end >= min && end <= window.length) cut = end;
  }
  return cut;
}

/** Consecutive slices of `text` that join back to it exactly: never trimmed, never overlapping.
 * `maxEnd(start)` is the furthest a slice starting at `start` may reach; within that, a slice ends
 * at the most preferred boundary found in its second half, else at any boundary, else where it
 * must (never inside a surrogate pair). */
export function verbatimSlices(
  text: string,
  maxEnd: (start: number) => number,
  boundaries: readonly RegExp[],
): string[] {
  const slices: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(maxEnd(start), text.length);
    if (end < text.length) {
      const window = text.slice(start, end);
      const half = Math.floor(window.length / 2);
      let cut = 0;
      for (const re of boundaries) if ((cut = lastCut(window, re, half)) > 0) break;
      if (cut === 0) for (const re of boundaries) if ((cut = lastCut(window, re, 1)) > 0) break;
      if (cut > 0) end = start + cut;
      else if (end - start > 1 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    }
    slices.push(text.slice(start, end));
    start = end;
  }
  return slices;
}

/** `ingest-text`: slices of at most `maxBytes` UTF-8 bytes, cut at paragraph or sentence ends. */
export function textSlices(text: string, maxBytes: number): string[] {
  const maxEnd = (start: number) => {
    let bytes = 0;
    let i = start;
    while (i < text.length) {
      const cp = text.codePointAt(i)!;
      const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (bytes + size > maxBytes) break;
      bytes += size;
      i += cp >= 0x10000 ? 2 : 1;
    }
    return Math.max(i, start + 1);
  };
  return verbatimSlices(text, maxEnd, [PARAGRAPH, SENTENCE, SPACE]);
}

/** `ingest-text-by-heart`: parts of at most 2,000 characters, cut after a sentence end or a space
 * when possible. */
export function byHeartParts(text: string, maxChars = BY_HEART_PART_CHARS): string[] {
  return verbatimSlices(text, (start) => start + maxChars, [SENTENCE, SPACE]);
}

// -------------------------------------------------------------------------------------------------
// Files

export type TrainingFileType = 'pdf' | 'docx' | 'text';

export const MIME_OF: Record<TrainingFileType, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  text: 'text/plain',
};

/** The type of a training file from what the magic-number sniffer found (`sniffed`) and the
 * bytes: PDF, DOCX, or UTF-8 text (TXT, Markdown, CSV…); anything else is null (415). */
export function trainingFileType(sniffed: string | undefined, data: Uint8Array): TrainingFileType | null {
  if (sniffed === MIME_OF.pdf) return 'pdf';
  if (sniffed === MIME_OF.docx) return 'docx';
  if (sniffed !== undefined) return null;
  return looksLikeText(data) ? 'text' : null;
}

export const SCREENSHOT_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];

/** A screenshot's type: PNG, JPEG or WebP (sniffed), else null (415). */
export function screenshotType(sniffed: string | undefined): string | null {
  return sniffed !== undefined && SCREENSHOT_TYPES.includes(sniffed) ? sniffed : null;
}

/** `languages`: a comma list of shipped codes (default all, in the shipped order); an unknown
 * code is named. */
export function parseLanguages(
  value: string | undefined,
): { ok: true; languages: OcrLanguage[] } | { ok: false; message: string } {
  const given = (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (given.length === 0) return { ok: true, languages: [...SHIPPED_LANGUAGES] };
  const unknown = given.filter((l) => !(SHIPPED_LANGUAGES as readonly string[]).includes(l));
  if (unknown.length)
    return {
      ok: false,
      message: `unknown language ${unknown.join(', ')}; the shipped languages are ${SHIPPED_LANGUAGES.join(', ')}`,
    };
  return { ok: true, languages: SHIPPED_LANGUAGES.filter((l) => given.includes(l)) };
}

// Normalisation and truncation of a document's text run in the extraction thread: plain JavaScript.
export { keepChars, normaliseText } from './training.text.mjs';

/** At most `max` UTF-8 bytes of `text` (cut at a code point), and whether it was cut. */
export function keepBytes(text: string, max: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text, 'utf8') <= max) return { text, truncated: false };
  const [first = ''] = textSlices(text, max);
  return { text: first, truncated: true };
}

/** Consecutive groups of at most `size` items. */
export function groupsOf<T>(items: readonly T[], size = CHUNKS_PER_CALL): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

// -------------------------------------------------------------------------------------------------
// Beliefs

/** At most `max` characters (code points), cut at a word end when one is in the last fifth. */
function clip(text: string, max: number): string {
  const points = [...text];
  if (points.length <= max) return text;
  const head = points.slice(0, max).join('');
  const space = head.lastIndexOf(' ');
  return (space >= head.length * 0.8 ? head.slice(0, space) : head).trimEnd();
}

/** A belief from a line: a line not starting "I " gets the prefix "I believe: "; at most 400
 * characters. Empty lines give null. */
export function asBelief(line: string): string | null {
  const text = line.trim();
  if (!text) return null;
  return clip(text.startsWith('I ') ? text : `I believe: ${text}`, BELIEF_MAX_CHARS);
}

/** List markers a model puts before its lines ("- ", "* ", "• ", "1. ", "2) "). */
const MARKER = /^\s*(?:[-*•·–]|\d{1,3}[.)])\s+/;

/** The beliefs of one synthesis answer: one a line, list markers removed, at most 20. */
export function beliefsFromAnswer(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => asBelief(line.replace(MARKER, '')))
    .filter((b): b is string => b !== null)
    .slice(0, BELIEFS_PER_GROUP);
}

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

/** Offline: each sentence of at least four words becomes a belief, at most 20 for the group. */
export function offlineBeliefs(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => (s.match(WORD)?.length ?? 0) >= OFFLINE_MIN_WORDS)
    .slice(0, BELIEFS_PER_GROUP)
    .map((s) => asBelief(s)!);
}

/** The key two beliefs are the same by: case and runs of whitespace ignored. */
const beliefKey = (b: string) => b.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();

/** Drops beliefs already seen (`seen` carries the keys across groups), keeping the first. */
export function dedupBeliefs(beliefs: readonly string[], seen: Set<string> = new Set()): string[] {
  const out: string[] = [];
  for (const b of beliefs) {
    const key = beliefKey(b);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(b);
  }
  return out;
}

export interface Persona {
  id: number;
  name: string;
  description: string;
  /** The character's card (a simulation's speakers speak from it). */
  personality?: string;
  speakingStyle?: string;
  goals?: string[];
}

/** The synthesis call of one group of chunks. */
export function synthesisPrompt(
  npc: Persona,
  doc: { fileName: string; title: string | null },
  chunks: readonly string[],
): { system: string; user: string } {
  return {
    system: [
      `You turn documents into the core beliefs of ${npc.name}${npc.description ? `, ${npc.description}` : ''}.`,
      `Read the excerpts and write at most ${BELIEFS_PER_GROUP} beliefs ${npc.name} holds because of them, in the first person: each line one belief starting with "I ", at most ${BELIEF_MAX_CHARS} characters, no numbering, no other text.`,
    ].join('\n'),
    user: [
      `Document: ${doc.title ?? doc.fileName}`,
      ...chunks.map((c, i) => `--- Excerpt ${i + 1} of ${chunks.length} ---\n${c}`),
    ].join('\n\n'),
  };
}

// -------------------------------------------------------------------------------------------------
// Job progress

/** The progress a job reports at each step: 0 queued, 0.05 extracting, 0.1–0.9 across the
 * synthesis calls (or OCR), 0.95 storing, 1 done. */
export function stageProgress(
  stage: 'queued' | 'extracting' | 'synthesising' | 'storing' | 'done',
  done = 0,
  total = 1,
): number {
  switch (stage) {
    case 'queued':
      return 0;
    case 'extracting':
      return 0.05;
    case 'synthesising':
      return Math.round((0.1 + 0.8 * (total > 0 ? done / total : 1)) * 1000) / 1000;
    case 'storing':
      return 0.95;
    case 'done':
      return 1;
  }
}

// -------------------------------------------------------------------------------------------------
// Simulation

/** Who speaks at each turn offline: round-robin from the initiator, the others in the order given. */
export function roundRobin(initiatorId: number, participantIds: readonly number[], turns: number): number[] {
  const order = [initiatorId, ...participantIds.filter((id) => id !== initiatorId)];
  return Array.from({ length: turns }, (_, i) => order[i % order.length]!);
}

/** One speaker of a simulation as the prompt introduces it: its card, then what it knows. */
function castEntry(c: Persona, knows: readonly string[]): string {
  const lines = [`- id ${c.id}: ${c.name}${c.description ? ` (${c.description})` : ''}`];
  if (c.personality) lines.push(`  Personality: ${c.personality}`);
  if (c.speakingStyle) lines.push(`  How ${c.name} speaks: ${c.speakingStyle}`);
  if (c.goals?.length) lines.push(`  What ${c.name} wants: ${c.goals.join('; ')}`);
  if (knows.length)
    lines.push(`  What ${c.name} knows (only ${c.name} knows this):`, ...knows.map((k) => `    - ${k}`));
  return lines.join('\n');
}

export function simulationPrompt(
  cast: readonly Persona[],
  initiatorId: number,
  topic: string,
  turns: number,
  /** Each speaker's own memories bearing on the topic, by id. */
  knowledge: ReadonlyMap<number, readonly string[]> = new Map(),
): { system: string; user: string } {
  const initiator = cast.find((c) => c.id === initiatorId)!;
  return {
    system: [
      'You write a conversation between these characters, each in their own voice and from their own knowledge:',
      ...cast.map((c) => castEntry(c, knowledge.get(c.id) ?? [])),
      `Write exactly ${turns} turns. ${initiator.name} (id ${initiator.id}) speaks first; only the characters listed speak.`,
      'Reply with JSON only, exactly of this form: {"turns":[{"npcUserId":<id>,"text":"<what they say>"}]}',
    ].join('\n'),
    user: `Topic: ${topic}`,
  };
}

export interface SimulatedTurn {
  npcUserId: number;
  text: string;
}

/** The model's turns: from its JSON, turns of characters not taking part dropped, the turns before
 * the initiator's first dropped (the initiator speaks first), at most `turns`. Null when the answer
 * holds no usable turn. */
export function parseSimulation(
  text: string,
  participantIds: readonly number[],
  initiatorId: number,
  turns: number,
): SimulatedTurn[] | null {
  const list = (jsonObjectIn(text) as { turns?: unknown } | null | undefined)?.turns;
  if (!Array.isArray(list)) return null;
  const ids = new Set(participantIds);
  const parsed: SimulatedTurn[] = [];
  for (const t of list as unknown[]) {
    const id = Number((t as { npcUserId?: unknown } | null)?.npcUserId);
    const said = (t as { text?: unknown } | null)?.text;
    if (!ids.has(id) || typeof said !== 'string' || !said.trim()) continue;
    parsed.push({ npcUserId: id, text: said.trim() });
  }
  const first = parsed.findIndex((t) => t.npcUserId === initiatorId);
  if (first === -1) return null;
  return parsed.slice(first, first + turns);
}
