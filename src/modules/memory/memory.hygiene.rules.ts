// Memory hygiene (pure rules, table-tested in memory.hygiene.rules.test.ts): which lines of a chat
// exchange are worth a memory, when two memories are near-duplicates, and, offline, when a later
// fact supersedes an earlier one ("my X is Y" forms).
//
// - An exchange is stored as "<player>: <text>" followed by the replies that carry something,
//   "<speaker>: <text>" each. A line carries nothing when it is fewer than two words ("1",
//   "Blaze") or has no word besides function words, greetings, thanks, assent and numbers
//   ("hello there", "ok thanks", "how are you?"). A reply carries nothing too when it says it does
//   not remember, acknowledges ("Thank you, I'll remember that", at most twelve words), or
//   quotes back what is remembered (the offline model's "Here is what I remember…"); a reply to
//   a line that carried nothing must have a statement of at least five content words (more than
//   a greeting back). A player's
//   question whose every reply carries nothing leaves no memory; a statement whose replies carry
//   nothing is stored alone (the player's fact, not the acknowledgement).
// - Near-duplicates: the same text once normalised (lower case, letters and digits only, single
//   spaces), or, for short texts (both at most 40 words), word sets whose Jaccard overlap is at
//   least 0.9 where no word that differs is a negation or a number ("he is twelve" and "he's
//   twelve" are one fact; "is not called" and "is called", "31" and "32" are not).
// - Superseding, offline: the player's statements are read for facts with one value a subject can
//   hold at a time: "my X is called / named Y", "my X's name is Y", "the name of my X is Y",
//   "my X is Y" or "my X are Y" when X is a slot (favourite …, best …, name, job, age, birthday,
//   address …) or Y is a name or a number, "I live in Y", "I work as / at / for Y" (a name as
//   value is its capitalised words: "Storm now that he is older" is "storm"). A later memory
//   stating the same subject with another value supersedes the earlier one; the earlier memory's
//   other sentences, when they carry something, are kept as a remainder memory.
import { contentWords } from '../../platform/models/words.js';

const FILLER = new Set(
  (
    'hello hi hey hiya howdy greetings yo morning afternoon evening night good bye goodbye ' +
    'thanks thank thx ty cheers please ok okay k kk yes yeah yep yup no nope nah sure fine cool ' +
    'great nice wow lol haha hmm um uh oh ah right alright indeed well whatever'
  ).split(' '),
);

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? [];
}

/** Fewer than two words, or nothing but function words, greetings, assent and numbers. */
export function carriesNothing(text: string): boolean {
  if (tokens(text).length < 2) return true;
  return contentWords(text).every((w) => FILLER.has(w) || /^\p{N}+$/u.test(w));
}

// A sentence that asks, though it may lack its question mark.
const ASKS =
  /^(what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|was|were|can|could|would|will|should|tell me|remind me|remember)\b/i;

export function isQuestion(text: string): boolean {
  const t = text.trim();
  return t.endsWith('?') || ASKS.test(t);
}

const NOT_REMEMBERED = [
  /^(i'?m sorry,?\s*)?(but\s+)?i (don'?t|do not|can'?t|cannot|couldn'?t) (remember|recall|find)\b/i,
  /^i (don'?t|do not) (know|have (any )?(record|memory))\b/i,
  /^no stored context matches\b/i,
  /^the unified memory holds no record\b/i,
];
const ACKNOWLEDGES =
  /^(thank you|thanks|noted|recorded|got it|understood|ok(ay)?|sure|of course|good to know|nice to know|i'?ll remember|i will remember|i'?ll keep|i will keep|i'?ve noted|i have noted)\b/i;
const QUOTES_BACK = [
  /^(here is|here's) what i remember\b/i,
  /^i remember this, and it matters to me\b/i,
  /^relevant context:/i,
  /^across the unified memory i observe\b/i,
  /^(on [^,:]{3,40}, )?[^:"]{1,60} (said|noted): "/i,
];

/** A reply that says it does not remember, acknowledges, or quotes back what is remembered. */
export function replyCarriesNothing(text: string): boolean {
  const t = text.trim();
  if (carriesNothing(t)) return true;
  if (NOT_REMEMBERED.some((r) => r.test(t)) || QUOTES_BACK.some((r) => r.test(t))) return true;
  return ACKNOWLEDGES.test(t) && tokens(t).length <= 12;
}

/** A reply to a line that carried nothing (a greeting) is kept when one of its statements has at
 * least five content words: more than a greeting back. */
function tellsOnItsOwn(text: string): boolean {
  return sentences(text).some((s) => !isQuestion(s) && contentWords(s).length >= 5);
}

export interface Exchange {
  playerName: string;
  userText: string;
  replies: { speakerName: string; text: string }[];
}

/** The memory an exchange leaves, or null when it carries nothing (rules above). */
export function exchangeContent(x: Exchange, maxChars = 8000): string | null {
  const player = carriesNothing(x.userText) ? null : x.userText.trim();
  const replies = x.replies.filter(
    (r) => !replyCarriesNothing(r.text) && (player !== null || tellsOnItsOwn(r.text)),
  );
  if (replies.length === 0 && (player === null || isQuestion(player))) return null;
  const lines = [
    ...(player !== null ? [`${x.playerName}: ${player}`] : []),
    ...replies.map((r) => `${r.speakerName}: ${r.text.trim()}`),
  ];
  return lines.join('\n').slice(0, maxChars);
}

// ---------------------------------------------------------------------------------------------
// Near-duplicates

export function normalise(text: string): string {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).join(' ');
}

const SHORT_WORDS = 40;
const OVERLAP = 0.9;
const TELLS_APART = /^(not|no|never|nor|none|nobody|nothing|neither|t|\p{N}+)$/u;

/** Whether a text is a near-duplicate of `text` (rules above): `text` normalised once for every
 * text it is compared with (a new memory against its stored candidates). */
export function nearDuplicateOf(text: string): (other: string) => boolean {
  const nb = normalise(text);
  const wordsB = nb.split(' ');
  const wb = new Set(wordsB);
  return (other) => {
    const na = normalise(other);
    if (na === nb) return true;
    const wordsA = na.split(' ');
    if (wordsA.length > SHORT_WORDS || wordsB.length > SHORT_WORDS) return false;
    const wa = new Set(wordsA);
    const differ = [...wa].filter((w) => !wb.has(w)).concat([...wb].filter((w) => !wa.has(w)));
    if (differ.some((w) => TELLS_APART.test(w))) return false;
    const shared = [...wa].filter((w) => wb.has(w)).length;
    return shared / (shared + differ.length) >= OVERLAP;
  };
}

// ---------------------------------------------------------------------------------------------
// Superseding, offline

export interface StatedFact {
  /** The subject and the relation, normalised ("horse#name", "favourite colour#is", "home#in"). */
  key: string;
  /** The value, normalised ("blaze"). */
  value: string;
}

const SLOTS = new Set(
  (
    'name surname nickname job profession occupation work age birthday address email phone number ' +
    'hometown city country town street postcode zip employer school university title role'
  ).split(' '),
);
const SUBJECT = '((?:[\\p{L}-]+ ){0,2}?[\\p{L}-]+)';
// A value ends at a clause's end (for "is"; a list after "are" runs to the sentence's end).
const VALUE = '([^,;!?]+?)(?=\\s*(?:[,;!?]|\\.(?:\\s|$)|\\s(?:and|but|which|who|because|since|so)\\s|$))';
const FORMS: { re: RegExp; relation: (m: RegExpExecArray) => string; subject?: string }[] = [
  { re: new RegExp(`\\bmy ${SUBJECT}'s name is ${VALUE}`, 'iu'), relation: () => 'name' },
  { re: new RegExp(`\\bthe name of my ${SUBJECT} is ${VALUE}`, 'iu'), relation: () => 'name' },
  { re: new RegExp(`\\bmy ${SUBJECT} (?:is|was) (?:called|named) ${VALUE}`, 'iu'), relation: () => 'name' },
  { re: new RegExp(`\\bmy ${SUBJECT} are ([^.;!?]+)`, 'iu'), relation: () => 'are' },
  { re: new RegExp(`\\bmy ${SUBJECT} is (?!called\\b|named\\b)${VALUE}`, 'iu'), relation: () => 'is' },
  {
    re: new RegExp(`\\bi (?:now |currently |still )?live in ${VALUE}`, 'iu'),
    relation: () => 'in',
    subject: 'home',
  },
  {
    re: new RegExp(`\\bi (?:now |currently |still )?work (as|at|for) ${VALUE}`, 'iu'),
    relation: (m) => m[1]!.toLowerCase(),
    subject: 'work',
  },
];

/** A value as compared: a name is its capitalised words ("Storm now that he is older" is
 * "storm"), anything else its words without a leading article. */
function cleanValue(v: string): string {
  const name = /^\p{Lu}[\p{L}'-]*(?:\s+(?:\p{Lu}[\p{L}'-]*|of|de|van|von|la|le|da|del))*/u.exec(v.trim());
  return normalise(name ? name[0] : v.replace(/^(a|an|the)\s+/i, ''));
}

/** Whether "my X is Y" holds one value at a time: X a slot, or Y a name or a number. */
function oneValue(subject: string, rawValue: string): boolean {
  const words = subject.split(' ');
  if (['favourite', 'favorite', 'best', 'current', 'usual'].includes(words[0]!)) return true;
  if (SLOTS.has(words.at(-1)!)) return true;
  return /^(\p{Lu}|\p{N})/u.test(rawValue.trim());
}

/** The one-value facts a statement of the player's states (forms above). */
export function statedFacts(text: string): StatedFact[] {
  const out: StatedFact[] = [];
  for (const sentence of sentences(text)) {
    if (isQuestion(sentence)) continue;
    for (const f of FORMS) {
      const m = f.re.exec(sentence);
      if (!m) continue;
      const subject = (f.subject ?? m[1]!).toLowerCase().replace('favorite', 'favourite');
      const raw = f.subject ? m[m.length - 1]! : m[2]!;
      const relation = f.relation(m);
      if (/^(not|no|never)\b/i.test(raw.trim())) continue;
      if (relation === 'is' && !oneValue(subject, raw)) continue;
      const value = cleanValue(raw);
      if (value && !out.some((o) => o.key === `${subject}#${relation}`))
        out.push({ key: `${subject}#${relation}`, value });
      break;
    }
  }
  return out;
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The player's lines of a stored exchange ("<player>: <text>"). */
function playerLines(content: string, playerName: string): string[] {
  const prefix = `${playerName}: `;
  return content
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .map((l) => l.slice(prefix.length));
}

export interface Supersession {
  id: number;
  /** What of the earlier memory still holds, as a memory of its own; null when nothing does. */
  remainder: string | null;
}

/** The stored memories a new exchange supersedes, offline (rules above): each earlier memory
 * whose player states a subject the new one states with another value. */
export function offlineSupersessions(
  content: string,
  playerName: string,
  stored: { id: number; content: string }[],
): Supersession[] {
  const facts = new Map(
    playerLines(content, playerName)
      .flatMap(statedFacts)
      .map((f) => [f.key, f.value]),
  );
  if (facts.size === 0) return [];
  const out: Supersession[] = [];
  for (const m of stored) {
    const lines = m.content.split('\n');
    const prefix = `${playerName}: `;
    const changed = (sentence: string) =>
      statedFacts(sentence).some((f) => facts.has(f.key) && facts.get(f.key) !== f.value);
    if (!playerLines(m.content, playerName).some((l) => sentences(l).some(changed))) continue;
    const kept = lines.flatMap((l) => {
      if (!l.startsWith(prefix)) return replyCarriesNothing(l.replace(/^[^:]{1,60}:\s*/, '')) ? [] : [l];
      const rest = sentences(l.slice(prefix.length)).filter((s) => !changed(s));
      return rest.length && !carriesNothing(rest.join(' ')) ? [`${prefix}${rest.join(' ')}`] : [];
    });
    const remainder = kept.some((l) => l.startsWith(prefix)) ? kept.join('\n') : null;
    out.push({ id: m.id, remainder });
  }
  return out;
}
