import { describe, expect, it } from 'vitest';
import {
  asBelief,
  beliefsFromAnswer,
  byHeartParts,
  dedupBeliefs,
  groupsOf,
  keepBytes,
  keepChars,
  normaliseText,
  offlineBeliefs,
  parseLanguages,
  parseSimulation,
  roundRobin,
  screenshotType,
  stageProgress,
  textSlices,
  trainingFileType,
} from './training.rules.js';

describe('byHeartParts', () => {
  const long = Array.from({ length: 120 }, (_, i) => `Sentence ${i}, with some words in it.`).join(' ');
  it.each([
    ['short text', 'Just this.'],
    ['many sentences', long],
    ['no space at all', 'x'.repeat(4500)],
    ['leading and trailing spaces kept', `   ${long}\n\n  `],
    ['emoji across the cut', '😀'.repeat(2500)],
    ['CRLF and tabs', `a\r\n\tb `.repeat(900)],
  ])('%s: parts of ≤ 2000 that join back exactly', (_name, text) => {
    const parts = byHeartParts(text);
    expect(parts.join('')).toBe(text);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(2000);
    // No part starts or ends inside a surrogate pair.
    for (const p of parts)
      expect(p).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('cuts after a sentence end when one is in the second half', () => {
    const parts = byHeartParts(long);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts.slice(0, -1)) expect(p).toMatch(/[.] $/);
  });

  it('cuts at a space when no sentence ends', () => {
    const words = Array.from({ length: 800 }, (_, i) => `word${i}`).join(' ');
    const parts = byHeartParts(words);
    for (const p of parts.slice(0, -1)) expect(p.endsWith(' ')).toBe(true);
  });
});

describe('textSlices', () => {
  it('cuts at paragraph ends first and keeps every byte', () => {
    const para = (i: number) => `Paragraph ${i}. ` + 'Words and more words. '.repeat(20);
    const text = Array.from({ length: 10 }, (_, i) => para(i)).join('\n\n');
    const slices = textSlices(text, 1200);
    expect(slices.join('')).toBe(text);
    for (const s of slices) expect(Buffer.byteLength(s)).toBeLessThanOrEqual(1200);
    for (const s of slices.slice(0, -1)) expect(s.endsWith('\n\n')).toBe(true);
  });
  it('measures bytes, not characters', () => {
    const text = 'é'.repeat(1000);
    const slices = textSlices(text, 500);
    expect(slices.join('')).toBe(text);
    for (const s of slices) expect(Buffer.byteLength(s)).toBeLessThanOrEqual(500);
  });
  it('one slice when it fits', () => {
    expect(textSlices('Hello world.', 100)).toEqual(['Hello world.']);
  });
});

describe('file types', () => {
  it.each([
    ['application/pdf', 'pdf'],
    ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
    ['image/png', null],
    ['application/zip', null],
  ])('sniffed %s → %s', (mime, want) => {
    expect(trainingFileType(mime, Buffer.from('x'))).toBe(want);
  });
  it.each([
    ['# Title\n\nMarkdown', 'text'],
    ['a,b,c\n1,2,3\n', 'text'],
    ['\u0000binary', null],
  ])('unsniffed %j → %s', (text, want) => {
    expect(trainingFileType(undefined, Buffer.from(text))).toBe(want);
  });
  it('invalid UTF-8 is not text', () => {
    expect(trainingFileType(undefined, Buffer.from([0xff, 0xfe, 0x41]))).toBe(null);
  });
  it.each([
    ['image/png', 'image/png'],
    ['image/jpeg', 'image/jpeg'],
    ['image/webp', 'image/webp'],
    ['image/gif', null],
    [undefined, null],
  ])('screenshot %s → %s', (mime, want) => {
    expect(screenshotType(mime)).toBe(want);
  });
});

describe('parseLanguages', () => {
  it.each([
    [undefined, ['eng', 'fra']],
    ['', ['eng', 'fra']],
    ['fra', ['fra']],
    [' FRA , eng ', ['eng', 'fra']],
  ])('%j → %j', (given, want) => {
    expect(parseLanguages(given)).toEqual({ ok: true, languages: want });
  });
  it('names an unknown code', () => {
    const r = parseLanguages('eng,deu');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain('deu');
  });
});

describe('normaliseText and truncation', () => {
  it.each([
    ['\uFEFFHello', 'Hello'],
    ['Cafe\u0301', 'Café'],
    ['a \t  b\u00a0c', 'a b c'],
    ['line  \r\n  next', 'line\nnext'],
    ['a\n\n\n\n\nb', 'a\n\nb'],
    ['  \n padded \n ', 'padded'],
  ])('%j → %j', (raw, want) => {
    expect(normaliseText(raw)).toBe(want);
  });
  it('keepChars never splits a pair', () => {
    expect(keepChars('ab😀', 3)).toEqual({ text: 'ab', truncated: true });
    expect(keepChars('abc', 3)).toEqual({ text: 'abc', truncated: false });
  });
  it('keepBytes', () => {
    expect(keepBytes('ééé', 4)).toEqual({ text: 'éé', truncated: true });
    expect(keepBytes('abc', 4)).toEqual({ text: 'abc', truncated: false });
  });
  it('groupsOf groups by four', () => {
    expect(groupsOf([1, 2, 3, 4, 5, 6, 7, 8, 9]).map((g) => g.length)).toEqual([4, 4, 1]);
  });
});

describe('beliefs', () => {
  it.each([
    ['I love the sea.', 'I love the sea.'],
    ['The sea is calm.', 'I believe: The sea is calm.'],
    ['i am lowercase', 'I believe: i am lowercase'],
    ['Icarus flew', 'I believe: Icarus flew'],
    ['   ', null],
  ])('asBelief(%j) → %j', (line, want) => {
    expect(asBelief(line)).toBe(want);
  });
  it('clips to 400 characters at a word end', () => {
    const b = asBelief('I ' + 'remember '.repeat(80))!;
    expect([...b].length).toBeLessThanOrEqual(400);
    expect(b.endsWith('remember')).toBe(true);
  });
  it('reads one belief a line, markers removed, at most 20', () => {
    const answer = [
      '- I like tea',
      '2. The tide turns',
      '',
      '* I fear storms',
      ...Array(30).fill('I repeat'),
    ].join('\n');
    const beliefs = beliefsFromAnswer(answer);
    expect(beliefs.slice(0, 3)).toEqual(['I like tea', 'I believe: The tide turns', 'I fear storms']);
    expect(beliefs).toHaveLength(20);
  });
  it('dedups ignoring case and spacing, across groups', () => {
    const seen = new Set<string>();
    expect(dedupBeliefs(['I like tea', 'I LIKE  TEA', 'I like coffee'], seen)).toEqual([
      'I like tea',
      'I like coffee',
    ]);
    expect(dedupBeliefs(['i like tea', 'I like rain'], seen)).toEqual(['I like rain']);
    expect(dedupBeliefs(['I Like Rain'], seen)).toEqual([]);
  });
  it('offline: sentences of four words or more, by the same rule', () => {
    expect(
      offlineBeliefs('Too short. I keep the light burning. The sea was rough that night!\nHi there'),
    ).toEqual(['I keep the light burning.', 'I believe: The sea was rough that night!']);
    expect(offlineBeliefs(Array(30).fill('One two three four.').join(' '))).toHaveLength(20);
  });
});

describe('progress', () => {
  it.each([
    ['queued', 0, 1, 0],
    ['extracting', 0, 1, 0.05],
    ['synthesising', 0, 4, 0.1],
    ['synthesising', 2, 4, 0.5],
    ['synthesising', 4, 4, 0.9],
    ['storing', 0, 1, 0.95],
    ['done', 0, 1, 1],
  ] as const)('%s %d/%d → %d', (stage, done, total, want) => {
    expect(stageProgress(stage, done, total)).toBe(want);
  });
});

describe('simulation', () => {
  it('round-robin from the initiator', () => {
    expect(roundRobin(7, [3, 7, 5], 5)).toEqual([7, 3, 5, 7, 3]);
  });
  const ids = [1, 2, 3];
  it.each([
    ['plain JSON', '{"turns":[{"npcUserId":1,"text":"Hi"},{"npcUserId":2,"text":"Hello"}]}', [1, 2]],
    [
      'JSON in prose, a stranger dropped',
      'Sure: {"turns":[{"npcUserId":1,"text":"a"},{"npcUserId":9,"text":"b"},{"npcUserId":3,"text":"c"}]} done',
      [1, 3],
    ],
    [
      'turns before the initiator dropped',
      '{"turns":[{"npcUserId":2,"text":"a"},{"npcUserId":1,"text":"b"},{"npcUserId":2,"text":"c"}]}',
      [1, 2],
    ],
    ['ids as strings', '{"turns":[{"npcUserId":"1","text":"a"}]}', [1]],
    [
      'at most the turns asked',
      JSON.stringify({
        turns: Array.from({ length: 9 }, (_, i) => ({ npcUserId: (i % 3) + 1, text: `t${i}` })),
      }),
      [1, 2, 3, 1],
    ],
  ])('%s', (_name, text, speakers) => {
    expect(parseSimulation(text, ids, 1, 4)?.map((t) => t.npcUserId)).toEqual(speakers);
  });
  it.each([['not JSON'], ['{"turns": 3}'], ['{"turns":[{"npcUserId":2,"text":"a"}]}'], ['{"x":']])(
    'no usable turn: %j',
    (text) => {
      expect(parseSimulation(text, ids, 1, 4)).toBeNull();
    },
  );
});
