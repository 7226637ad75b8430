// Pure rules of the documents attached to a chat message: which passages of a document bear most
// on the message (BM25 over its passages, within a character budget), the system prompt's section
// that carries them, and the parts a document is stored in as memories.
import { chunkText } from '../memory/index.js';

/** Characters of attached documents a turn's system prompt carries, all of them together (about
 * 2,000 tokens): enough for the passages a question is about, small beside the history. */
export const DOCUMENT_CONTEXT_CHARS = 8_000;
/** Characters of one passage (cut after a sentence or a word where it can). */
export const PASSAGE_CHARS = 600;
/** Characters of a document's text read and kept (about 50 pages); the rest is dropped. */
export const DOCUMENT_MAX_CHARS = 100_000;
/** Characters of one stored `document_ingestion` memory: the training by-heart parts' size, so a
 * later turn's retrieval brings back a passage, not the whole document. */
export const DOCUMENT_PART_CHARS = 2_000;

/** A document attached to a message, read. */
export interface AttachedDocument {
  uploadContextId: string;
  fileId: number;
  /** The upload's file name (already made safe: no control characters). */
  name: string;
  mimeType: string;
  /** The text read (normalised), at most DOCUMENT_MAX_CHARS. */
  text: string;
  /** Whether the text was cut at DOCUMENT_MAX_CHARS. */
  truncated: boolean;
  /** What the prompt carries of it. */
  excerpt: Excerpt;
}

export interface Excerpt {
  /** The passages kept, in document order, `[…]` where text is left out. */
  text: string;
  /** Passages kept, of `total` (1 of 1: the whole text). */
  kept: number;
  total: number;
}

// Words that bear on nothing: a question's "what is the" must not pick passages.
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have he her his how i if in into ' +
    'is it its me my no not of on or our please she so tell than that the their them then there these ' +
    'they this to us was we were what when where which who whom why will with would you your'
  ).split(' '),
);

/** A text's search terms: lower case, accents dropped, stop words out, a plural's s off. */
export function terms(text: string): string[] {
  const words =
    text
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words
    .filter((w) => w.length > 1 && !STOP_WORDS.has(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

const K1 = 1.2;
const B = 0.75;

/** Each passage's BM25 score for the query (0: no term of the query in it). */
export function scorePassages(passages: readonly string[], query: string): number[] {
  const wanted = new Set(terms(query));
  const docs = passages.map(terms);
  if (wanted.size === 0 || docs.length === 0) return passages.map(() => 0);
  const avg = docs.reduce((n, d) => n + d.length, 0) / docs.length || 1;
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) if (wanted.has(w)) df.set(w, (df.get(w) ?? 0) + 1);
  return docs.map((d) => {
    const tf = new Map<string, number>();
    for (const w of d) if (wanted.has(w)) tf.set(w, (tf.get(w) ?? 0) + 1);
    let score = 0;
    for (const [w, f] of tf) {
      const n = df.get(w)!;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / avg));
    }
    return score;
  });
}

const GAP = '[…]';

/** What of `text` fits in `budget` characters: the whole text when it fits; else its passages
 * that bear most on `query`, then (to fill the budget, or when none does) those from the opening,
 * laid out in document order with `[…]` where text is left out. */
export function excerpt(text: string, query: string, budget: number): Excerpt {
  if (text.length <= budget) return { text, kept: 1, total: 1 };
  const passages = chunkText(text, Math.max(1, Math.min(PASSAGE_CHARS, budget - 2 * (GAP.length + 1))), 0);
  const scores = scorePassages(passages, query);
  const order = passages.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  // Each kept passage costs its text, a newline and at most one gap line before it; one gap may close.
  let room = budget - (GAP.length + 1);
  const kept: number[] = [];
  for (const i of order) {
    const cost = passages[i]!.length + GAP.length + 2;
    if (cost > room) continue;
    kept.push(i);
    room -= cost;
  }
  kept.sort((a, b) => a - b);
  const lines: string[] = [];
  kept.forEach((i, n) => {
    if (i !== (n === 0 ? 0 : kept[n - 1]! + 1)) lines.push(GAP);
    lines.push(passages[i]!);
  });
  if (kept.at(-1) !== passages.length - 1) lines.push(GAP);
  return { text: lines.join('\n'), kept: kept.length, total: passages.length };
}

/** The system prompt's section of the turn's documents ('' without any). */
export function documentsSection(documents: readonly AttachedDocument[] | undefined): string {
  return (documents ?? [])
    .map((d) => {
      const { kept, total } = d.excerpt;
      const note =
        kept === total && !d.truncated
          ? ''
          : `(${kept} of its ${total} passages: those that bear most on the message, then its opening; ${GAP} marks text left out)\n`;
      return `## Attached document: ${d.name}\n${note}${d.excerpt.text}`;
    })
    .join('\n\n');
}

/** The memories a document is stored as: consecutive parts of at most DOCUMENT_PART_CHARS, each
 * naming the file and its place, so a later turn that retrieves one knows where it comes from. */
export function documentParts(
  d: Pick<AttachedDocument, 'name' | 'text'>,
): { content: string; part: number; parts: number }[] {
  const parts = chunkText(d.text, DOCUMENT_PART_CHARS, 0);
  return parts.map((p, i) => ({
    content: `[${d.name}, part ${i + 1} of ${parts.length}]\n${p}`,
    part: i + 1,
    parts: parts.length,
  }));
}

/** Text a database stores: the control characters PostgreSQL (U+0000 is refused in text) and
 * the prompt have no use for dropped; tab, newlines and form feed kept. */
export function storableText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g, '');
}
