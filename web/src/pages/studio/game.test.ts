import { describe, expect, it } from 'vitest';
import { flagsOf, flagsText } from './game';

describe('relationship flags as text', () => {
  it.each([
    ['', {}],
    ['metAtForge', { metAtForge: true }],
    ['metAtForge=yes, owesFavour=no', { metAtForge: true, owesFavour: false }],
    [' a = TRUE ,b=0 ,', { a: true, b: false }],
  ])('reads %j', (text, flags) => {
    expect(flagsOf(text)).toEqual({ flags });
  });

  it.each(['a=maybe', 'a=yes=no', '=yes', 'two words=yes'])('refuses %j', (text) => {
    expect(flagsOf(text)).toHaveProperty('error');
  });

  it('writes flags back as it reads them', () => {
    const flags = { metAtForge: true, owesFavour: false };
    expect(flagsText(flags)).toBe('metAtForge=yes, owesFavour=no');
    expect(flagsOf(flagsText(flags))).toEqual({ flags });
  });
});
