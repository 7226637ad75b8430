// findUnsafeText: U+0000 and unpaired UTF-16 surrogates in strings, keys and nested values.
import { describe, expect, it } from 'vitest';
import { findUnsafeText, unsafeTextReason } from './safe-text.js';

const NUL = 'must not contain NUL characters (U+0000)';
const SURROGATE = 'must not contain unpaired UTF-16 surrogates';

describe('unsafeTextReason', () => {
  it.each([
    ['', null],
    ['plain text', null],
    ['grüße 日本語 ✓', null],
    ['an emoji 😀 (a surrogate pair)', null],
    ['\uD83D\uDE00', null],
    ['tab\tnewline\ncontrol\u0001\u007f', null],
    ['\uFFFD replacement', null],
    ['\u0000', NUL],
    ['a\u0000b', NUL],
    ['end\u0000', NUL],
    ['\uD800', SURROGATE],
    ['a\uD800b', SURROGATE],
    ['\uDC00', SURROGATE],
    ['x\uDFFF', SURROGATE],
    ['\uDBFF\uDBFF\uDC00', SURROGATE], // a high surrogate followed by a pair
    ['\uD800\uDC00\uDC00', SURROGATE], // a pair followed by a lone low surrogate
    ['\uDE00\uD83D', SURROGATE], // low then high: both unpaired
  ])('%j → %s', (text, reason) => {
    expect(unsafeTextReason(text)).toBe(reason);
  });
});

describe('findUnsafeText', () => {
  it.each<[string, unknown, { path: (string | number)[]; message: string } | null]>([
    ['a safe string', 'hello', null],
    ['numbers, booleans, null, undefined', [1, true, null, undefined, 2.5], null],
    ['a safe nested object', { a: { b: ['x', { c: 'ü😀' }] } }, null],
    ['a NUL at the top', 'a\u0000', { path: [], message: NUL }],
    ['a NUL in a field', { name: 'x\u0000' }, { path: ['name'], message: NUL }],
    [
      'a surrogate deep inside',
      { m: { list: [1, { v: '\uD800' }] } },
      { path: ['m', 'list', 1, 'v'], message: SURROGATE },
    ],
    ['an array element', ['ok', 'no\u0000'], { path: [1], message: NUL }],
    ['a key with NUL', { ok: 1, 'b\u0000d': 'fine' }, { path: ['b\uFFFDd'], message: `a key ${NUL}` }],
    [
      'a nested key with a surrogate',
      { meta: { '\uDC00': 1 } },
      { path: ['meta', '\uFFFD'], message: `a key ${SURROGATE}` },
    ],
    [
      'the first bad field in order',
      { a: 'fine', b: '\uD800', c: '\u0000' },
      { path: ['b'], message: SURROGATE },
    ],
    ['a value before a later bad key', { a: '\u0000', 'k\u0000': 1 }, { path: ['a'], message: NUL }],
    ['a Buffer is not text', { file: Buffer.from([0, 0, 0]) }, null],
    ['an ArrayBuffer and a Date are not text', [new ArrayBuffer(2), new Date(0)], null],
    [
      'an object of a dictionary class',
      Object.assign(new (class Dict {})(), { q: 'a\u0000' }),
      { path: ['q'], message: NUL },
    ],
    [
      'a null-prototype object',
      Object.assign(Object.create(null) as object, { q: '\u0000' }),
      { path: ['q'], message: NUL },
    ],
  ])('%s', (_name, value, expected) => {
    expect(findUnsafeText(value)).toEqual(expected);
  });

  it('prefixes the path it is given', () => {
    expect(findUnsafeText({ q: '\u0000' }, ['querystring'])).toEqual({
      path: ['querystring', 'q'],
      message: NUL,
    });
  });

  it('walks very deep nesting without exhausting the stack', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const found = findUnsafeText(deep);
    expect(found?.message).toBe(NUL);
    expect(found?.path).toHaveLength(100_000);
  });
});
