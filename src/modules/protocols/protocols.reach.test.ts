// A channel's reach cut to the caller's own protocol, as tables.
import { describe, expect, it } from 'vitest';
import { commonTools, lesserCapabilities } from './protocols.reach.js';

describe('protocol reach', () => {
  it.each([
    [['*'], ['a', 'b'], ['a', 'b']],
    [['a', 'b'], ['*'], ['a', 'b']],
    [['a', 'b'], ['b', 'c'], ['b']],
    [['a'], [], []],
    [['*'], ['*'], ['*']],
  ])('commonTools(%j, %j) = %j', (a, b, both) => {
    expect(commonTools(a, b)).toEqual(both);
  });

  it.each([
    ['full', 'standard', 'standard'],
    ['limited', 'full', 'limited'],
    ['standard', 'standard', 'standard'],
  ] as const)('memory access %s within %s is %s', (a, b, lesser) => {
    const caps = (memoryAccess: typeof a) => ({ memoryAccess, adminAccess: true, observer: true });
    expect(lesserCapabilities(caps(a), caps(b)).memoryAccess).toBe(lesser);
  });

  it('keeps admin and observer reach only when both give it', () => {
    const channel = { memoryAccess: 'full' as const, adminAccess: true, observer: true };
    const own = { memoryAccess: 'standard' as const, adminAccess: false, observer: false };
    expect(lesserCapabilities(channel, own)).toEqual(own);
    expect(lesserCapabilities(own, channel)).toEqual(own);
  });
});
