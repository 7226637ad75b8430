// The attached documents' pure rules as tables: search terms, passage scores, what of a document
// fits the prompt's budget, the prompt's section, and the parts a document is stored in.
import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_PART_CHARS,
  documentParts,
  documentsSection,
  excerpt,
  scorePassages,
  storableText,
  terms,
  type AttachedDocument,
} from './chat.documents.rules.js';

/** Paragraph `i` of a document about nothing in particular: distinct words, no question's terms. */
const filler = (i: number) =>
  `Paragraph ${i} describes the orchard rows, the pruning calendar and the cider press in plain words. ` +
  `Its apples ripen late and the farmers sort them by colour before the autumn fair begins.`;

describe('terms', () => {
  it.each([
    ['stop words out, lower case', 'What is the Keeper of the Light?', ['keeper', 'light']],
    [
      'accents dropped, plurals folded',
      'Les phares côtiers: lighthouses',
      ['les', 'phare', 'cotier', 'lighthouse'],
    ],
    ['a double s stays', 'glass class', ['glass', 'class']],
    ['numbers kept, one letter dropped', 'code 7741 a b', ['code', '7741']],
  ])('%s', (_, text, expected) => {
    expect(terms(text)).toEqual(expected);
  });
});

describe('scorePassages', () => {
  it.each([
    ['no term of the query: all 0', ['alpha beta', 'gamma'], 'delta', [0, 0]],
    ['only stop words: all 0', ['the what', 'is it'], 'what is it', [0, 0]],
  ])('%s', (_, passages, query, expected) => {
    expect(scorePassages(passages, query)).toEqual(expected);
  });

  it('ranks the passage with the rarer term of the query first', () => {
    const s = scorePassages(
      ['the keeper rows the boat', 'the keeper reads the code 7741', 'apples'],
      'keeper code',
    );
    expect(s[1]).toBeGreaterThan(s[0]!);
    expect(s[0]).toBeGreaterThan(s[2]!);
    expect(s[2]).toBe(0);
  });
});

describe('excerpt', () => {
  const paragraphs = Array.from({ length: 60 }, (_, i) => filler(i));
  paragraphs[45] = "The lighthouse keeper's door code is AMBER-7741, changed each spring.";
  paragraphs[30] = 'A zebra crossing near the market was repainted ZEBRA-0001 last year.';
  const text = paragraphs.join('\n\n');

  it('keeps a text that fits whole', () => {
    expect(excerpt('short text', 'anything', 100)).toEqual({ text: 'short text', kept: 1, total: 1 });
  });

  it('keeps the passage the message is about, then the opening, within the budget', () => {
    const e = excerpt(text, "What is the lighthouse keeper's code?", 2_000);
    expect(e.text.length).toBeLessThanOrEqual(2_000);
    expect(e.text).toContain('AMBER-7741');
    expect(e.text.startsWith('Paragraph 0 ')).toBe(true);
    expect(e.text).not.toContain('ZEBRA-0001');
    expect(e.text).toContain('[…]');
    expect(e.kept).toBeLessThan(e.total);
  });

  it('keeps the opening when nothing bears on the message', () => {
    const e = excerpt(text, 'Summarise this', 1_500);
    expect(e.text.startsWith('Paragraph 0 ')).toBe(true);
    expect(e.text.endsWith('[…]')).toBe(true);
    expect(e.text).not.toContain('AMBER-7741');
    expect(e.text.length).toBeLessThanOrEqual(1_500);
  });

  it.each([400, 800, 3_000, 8_000])('never exceeds a budget of %i characters', (budget) => {
    for (const query of ['lighthouse keeper code', 'zebra', 'orchard apples', ''])
      expect(excerpt(text, query, budget).text.length).toBeLessThanOrEqual(budget);
  });
});

describe('documentsSection', () => {
  const doc = (over: Partial<AttachedDocument>): AttachedDocument => ({
    uploadContextId: 'u',
    fileId: 1,
    name: 'notes.txt',
    mimeType: 'text/plain',
    text: 'Hello.',
    truncated: false,
    excerpt: { text: 'Hello.', kept: 1, total: 1 },
    ...over,
  });

  it.each([
    ['no documents', undefined, ''],
    ['a whole document', [doc({})], '## Attached document: notes.txt\nHello.'],
    [
      'a part of one',
      [doc({ name: 'a.pdf', excerpt: { text: 'x\n[…]', kept: 1, total: 9 } })],
      '## Attached document: a.pdf\n(1 of its 9 passages: those that bear most on the message, then its opening; […] marks text left out)\nx\n[…]',
    ],
    [
      'two, one after the other',
      [doc({}), doc({ name: 'b.docx' })],
      '## Attached document: notes.txt\nHello.\n\n## Attached document: b.docx\nHello.',
    ],
  ])('%s', (_, docs, expected) => {
    expect(documentsSection(docs)).toBe(expected);
  });
});

describe('documentParts', () => {
  it('stores a short text as one part naming the file', () => {
    expect(documentParts({ name: 'n.txt', text: 'One fact.' })).toEqual([
      { content: '[n.txt, part 1 of 1]\nOne fact.', part: 1, parts: 1 },
    ]);
  });

  it('splits a long text into numbered parts of at most DOCUMENT_PART_CHARS', () => {
    const text = Array.from({ length: 40 }, (_, i) => filler(i)).join(' ');
    const parts = documentParts({ name: 'n.txt', text });
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i + 1));
    for (const p of parts) {
      expect(p.parts).toBe(parts.length);
      expect(p.content.split('\n')[0]).toBe(`[n.txt, part ${p.part} of ${parts.length}]`);
      expect(p.content.length - p.content.indexOf('\n') - 1).toBeLessThanOrEqual(DOCUMENT_PART_CHARS);
    }
  });
});

describe('storableText', () => {
  it.each([
    ['NUL and other controls dropped', 'a\u0000b\u0007c', 'abc'],
    ['tab, newline and form feed kept', 'a\tb\nc\fd', 'a\tb\nc\fd'],
  ])('%s', (_, text, expected) => {
    expect(storableText(text)).toBe(expected);
  });
});
