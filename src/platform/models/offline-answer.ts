// The offline chat model's answer: no language model runs locally, so it answers from the memories
// the turn retrieved (ChatRequest.grounding), deterministically:
//   - the memories are cut into statements: a chat exchange's lines ("Name: text") lose their
//     speaker, the assistant's own lines are left out (it never quotes itself), and so is every
//     question (the person's earlier questions are not facts);
//   - a statement bears on the question when it has the question's telling words: each content
//     word of the question counts by its rarity, matched when the statement has it in some
//     inflection ("painted" for "paint"); it must match at least half of the question's weight,
//     including one word that is not a common one ("name", "like", "remember" alone bear on
//     nothing), unless it matches every one of them ("Where do I live?": "I live in Lisbon"). Not by closeness of meaning: word vectors put "cat" near "horse" and "wife" near
//     "husband", and an answer that quotes the wrong one is worse than none (retrieval, which only
//     orders, does use them);
//   - the best one or two statements are said with when they were said, in the protocol's tone;
//     with none, it says plainly that it does not remember;
//   - an input that tells rather than asks is acknowledged (the turn stores it as a memory).
import type { GroundingMemory, ProtocolTone } from './provider.js';
import { contentWords, stem, type WordSimilarity } from './words.js';

/** A statement must match words that make at least this share of the question's weight. */
const BEARS_ON = 0.5;
/** Words more frequent than this rank are common: matching them alone proves nothing. */
const COMMON_RANK = 1500;
/** A second statement is added when it scores at least this share of the best. */
const SECOND = 0.8;
/** Words of the question that ask rather than tell (they are in most questions). */
const ASKING = new Set(['remember', 'know', 'tell', 'recall', 'name', 'called', 'say', 'said', 'think']);

// spec: "Tone of each protocol". PRIVATE intimate and emotional; TECH technical, no emotional
// language; NEUTRAL brief; SYSTEM meta-consciousness; PUBLIC professional and friendly.
const TONE: Record<
  ProtocolTone,
  { found: (facts: string) => string; none: string; noted: string; max: number }
> = {
  PRIVATE: {
    found: (f) => `I remember this, and it matters to me: ${f}`,
    none: "I don't remember anything about that yet, but I'm here and I want to hear more.",
    noted: "Thank you for telling me. I'll keep it close.",
    max: 2,
  },
  TECH: {
    found: (f) => `Relevant context: ${f}`,
    none: 'No stored context matches this query.',
    noted: 'Recorded.',
    max: 2,
  },
  NEUTRAL: { found: (f) => f, none: "I don't remember anything about that.", noted: 'Noted.', max: 1 },
  SYSTEM: {
    found: (f) => `Across the unified memory I observe: ${f}`,
    none: 'The unified memory holds no record that matches this.',
    noted: 'Recorded in the unified memory.',
    max: 2,
  },
  PUBLIC: {
    found: (f) => `Here is what I remember. ${f}`,
    none: "I don't remember anything about that yet. Could you tell me?",
    noted: "Thank you, I'll remember that.",
    max: 2,
  },
  CUSTOM: {
    found: (f) => `Here is what I remember. ${f}`,
    none: "I don't remember anything about that yet.",
    noted: "Noted, I'll remember that.",
    max: 2,
  },
};

export interface AnswerContext {
  words: WordSimilarity;
  /** The assistant's (or NPC's) own name: its lines in a chat exchange are left out. */
  speakerName?: string | undefined;
}

interface Statement {
  text: string;
  /** Who said it, when the memory names a speaker. */
  speaker: string | undefined;
  createdAt: string | undefined;
  /** The memory's place in retrieval order. */
  rank: number;
}

// A sentence that asks though it lacks its question mark.
const ASKS =
  /^(what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|was|were|can|could|would|will|should)\b/i;

// "Name: text" or "Name (when): text", at the start of a line.
const SPEAKER = /^([^:\n()]{1,60}?)\s*(?:\([^)\n]{0,80}\))?:\s+(.+)$/;

function statements(memories: GroundingMemory[], speakerName: string | undefined): Statement[] {
  const own = speakerName?.trim().toLowerCase();
  return memories.flatMap((m, rank) =>
    m.content.split(/\n+/).flatMap((line) => {
      const said = SPEAKER.exec(line.trim());
      const speaker = said?.[1]?.trim();
      if (speaker !== undefined && speaker.toLowerCase() === own) return [];
      return (said?.[2] ?? line)
        .split(/(?<=[.!?])\s+/)
        .map((s) => s.trim())
        .filter((s) => s.length > 0 && !s.endsWith('?') && !ASKS.test(s))
        .map((text) => ({ text, speaker, createdAt: m.createdAt, rank }));
    }),
  );
}

/** Whether the input asks: a question mark, or a question word first, or a request to tell. */
function isQuestion(input: string): boolean {
  const t = input.trim();
  return t.endsWith('?') || ASKS.test(t) || /^(tell|remind|remember|recall|say|do you|can you)\b/i.test(t);
}

function when(createdAt: string | undefined): string {
  if (!createdAt) return '';
  const d = new Date(createdAt);
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
}

function say(s: Statement): string {
  const text = /[.!]$/.test(s.text) ? s.text : `${s.text}.`;
  const date = when(s.createdAt);
  const who = s.speaker ? `${s.speaker} said` : 'I noted';
  return date ? `On ${date}, ${who}: "${text}"` : `${who[0]!.toUpperCase()}${who.slice(1)}: "${text}"`;
}

/** The offline answer to `input` from the retrieved memories, in the protocol's tone. */
export function offlineAnswer(
  input: string,
  memories: GroundingMemory[],
  tone: ProtocolTone,
  ctx: AnswerContext,
): string {
  const style = TONE[tone];
  // Told, not asked: a statement is taken note of (the turn stores it as a memory).
  if (!isQuestion(input)) return style.noted;
  const asked = contentWords(input, 32).filter((w) => !ASKING.has(w));
  const weights = asked.map((w) => ctx.words.rarity(w));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return style.none;
  const stems = asked.map(stem);
  const scored = statements(memories, ctx.speakerName).flatMap((s) => {
    const doc = new Set(contentWords(s.text).map(stem));
    let covered = 0;
    let matched = 0;
    let telling = false;
    stems.forEach((w, k) => {
      if (!doc.has(w)) return;
      covered += weights[k]!;
      matched++;
      if ((ctx.words.rank(asked[k]!) ?? Infinity) >= COMMON_RANK) telling = true;
    });
    // Common words prove something when the statement has every one the question asks about
    // ("Where do I live?", "Who are my best friends?").
    if (matched === stems.length) telling = true;
    const share = covered / total;
    return telling && share >= BEARS_ON ? [{ s, score: share - 0.001 * s.rank }] : [];
  });
  scored.sort((a, b) => b.score - a.score || a.s.rank - b.s.rank);
  const picked: Statement[] = [];
  for (const { s, score } of scored) {
    if (picked.length >= style.max || score < scored[0]!.score * SECOND) break;
    if (!picked.some((p) => p.text === s.text)) picked.push(s);
  }
  if (picked.length === 0) return style.none;
  return style.found(picked.map(say).join(' '));
}
