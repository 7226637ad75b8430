// The chat turn's pure rules as tables: suggested replies in the model's answer (whole and
// streamed), the group director's reply, inline images, and the length preferences.
import { describe, expect, it } from 'vitest';
import {
  ChoicesFilter,
  decodeBase64Image,
  directorInstruction,
  extractChoices,
  lengthInstruction,
  maxTokensFor,
  parseDirectorReply,
} from './chat.rules.js';

describe('extractChoices', () => {
  it.each([
    ['no block', 'Hello there. ', { text: 'Hello there.', choices: [] }],
    ['a JSON block', 'Hi! <choices>["A","B"]</choices>', { text: 'Hi!', choices: ['A', 'B'] }],
    ['any case', 'Hi <CHOICES>["A"]</CHOICES>', { text: 'Hi', choices: ['A'] }],
    ['a list instead of JSON', 'Hi <choices>- Yes\n- No</choices>', { text: 'Hi', choices: ['Yes', 'No'] }],
    [
      'at most three non-empty strings, trimmed',
      '<choices>["a", " b ", 3, "", "c", "d"]</choices>',
      { text: '', choices: ['a', 'b', 'c'] },
    ],
    [
      'none longer than 200',
      `Ok <choices>["${'x'.repeat(201)}","short"]</choices>`,
      { text: 'Ok', choices: ['short'] },
    ],
    ['JSON that is not a list', 'Ok <choices>{"a":1}</choices>', { text: 'Ok', choices: [] }],
  ])('%s', (_, text, expected) => {
    expect(extractChoices(text)).toEqual(expected);
  });
});

describe('ChoicesFilter (streamed text)', () => {
  it.each([
    ['plain text passes', ['Hello ', 'world'], ['Hello ', 'world'], ''],
    ['a tag split over deltas is held, then hidden', ['Hi <cho', 'ices>["A"]</choices>'], ['Hi ', ''], ''],
    ['everything after the tag is hidden', ['A<choices>', 'more'], ['A', ''], ''],
    ['a tag-like start that is not the tag is released', ['x <', 'y'], ['x ', '<y'], ''],
    ['a tag that is not a prefix passes', ['a <b', 'c'], ['a <b', 'c'], ''],
    ['an undecided tail is flushed at the end', ['ends with <ch'], ['ends with '], '<ch'],
  ])('%s', (_, deltas, visible, flushed) => {
    const filter = new ChoicesFilter();
    expect(deltas.map((d) => filter.push(d))).toEqual(visible);
    expect(filter.flush()).toBe(flushed);
  });
});

describe('the group director', () => {
  const mira = { id: 2, name: 'Mira', description: 'a harbour guide' };
  const oren = { id: 3, name: 'Oren', description: 'a ferryman' };

  it('lists the cast with ids and descriptions', () => {
    const text = directorInstruction([mira, { id: 4, name: 'Kit', description: '' }]);
    expect(text).toContain('- id 2: Mira (a harbour guide)');
    expect(text).toContain('- id 4: Kit\n');
  });

  it.each([
    [
      'both characters answer',
      '{"responses":[{"npcUserId":2,"text":"Hi"},{"npcUserId":3,"text":"Aye"}],"choices":["Bye"]}',
      {
        responses: [
          { npcUserId: 2, text: 'Hi' },
          { npcUserId: 3, text: 'Aye' },
        ],
        choices: ['Bye'],
      },
    ],
    [
      'a character outside the conversation is dropped',
      '{"responses":[{"npcUserId":9,"text":"Intruder"},{"npcUserId":2,"text":"Hi"}]}',
      { responses: [{ npcUserId: 2, text: 'Hi' }], choices: [] },
    ],
    [
      'JSON inside prose, ids as strings',
      'Sure: {"responses":[{"npcUserId":"3","text":"Aye"}]} done',
      { responses: [{ npcUserId: 3, text: 'Aye' }], choices: [] },
    ],
    [
      'choices trimmed, empty ones dropped, at most three',
      '{"responses":[{"npcUserId":2,"text":"Hi"}],"choices":[" a ","","b","c","d"]}',
      { responses: [{ npcUserId: 2, text: 'Hi' }], choices: ['a', 'b', 'c'] },
    ],
    [
      'no JSON: the first character says the text',
      'Just words <choices>["Go"]</choices>',
      { responses: [{ npcUserId: 2, text: 'Just words' }], choices: ['Go'] },
    ],
    ['nothing at all', '', { responses: [{ npcUserId: 2, text: '…' }], choices: [] }],
  ])('%s', (_, text, expected) => {
    expect(parseDirectorReply(text, [mira, oren])).toEqual(expected);
  });
});

describe('decodeBase64Image', () => {
  it.each([
    ['plain base64', 'aGVsbG8=', 'hello'],
    ['a data: URL with whitespace', 'data:image/png;base64,aGVs bG8=', 'hello'],
    ['not base64', 'not base64!', null],
    ['empty', '', null],
    ['an empty data: URL', 'data:image/png;base64,', null],
  ])('%s', (_, value, expected) => {
    expect(decodeBase64Image(value)?.toString('utf8') ?? null).toBe(expected);
  });
});

describe('response length', () => {
  it.each([
    [undefined, 500, 'Answer in a short paragraph.'],
    ['short', 200, 'Answer in one to three sentences.'],
    ['medium', 500, 'Answer in a short paragraph.'],
    ['long', 1200, 'Answer thoroughly, in several paragraphs when useful.'],
  ] as const)('%s', (responseLength, tokens, instruction) => {
    const prefs = responseLength ? { responseLength } : undefined;
    expect(maxTokensFor(prefs)).toBe(tokens);
    expect(lengthInstruction(prefs)).toBe(instruction);
  });
});
