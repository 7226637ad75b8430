import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.rules.js';

describe('nestsDeeperThan', () => {
  it.each([
    { text: '{}', max: 1, deeper: false },
    { text: '{"a":[1]}', max: 1, deeper: true },
    { text: '{"a":[1]}', max: 2, deeper: false },
    { text: '[[[]]]', max: 2, deeper: true },
    { text: '[[],[],[]]', max: 2, deeper: false },
    // Brackets inside strings do not nest, escaped quotes do not end the string.
    { text: '{"a":"[[[[{{{{"}', max: 1, deeper: false },
    { text: '{"a":"\\"[[[["}', max: 1, deeper: false },
    { text: '{"a":"\\\\","b":[[]]}', max: 2, deeper: true },
    { text: '"plain"', max: 0, deeper: false },
  ])('$text (max $max) → $deeper', ({ text, max, deeper }) => {
    expect(nestsDeeperThan(text, max)).toBe(deeper);
  });

  it('five thousand levels: deeper than 64', () => {
    expect(nestsDeeperThan('['.repeat(5000) + ']'.repeat(5000), 64)).toBe(true);
  });
});
