import { describe, expect, it } from 'vitest';
import {
  chainReachesRoot,
  clipSummary,
  encodingContent,
  healthOf,
  onboardingChecks,
  statementCount,
  statusOf,
} from './consciousness.rules.js';

describe('dashboard health (every boundary)', () => {
  it.each([
    [0, 0, 'healthy'],
    [0.299, 0, 'healthy'],
    [0.3, 0, 'warning'],
    [0, 0.3, 'warning'],
    [0.499, 0.499, 'warning'],
    [0.5, 0, 'critical'],
    [0, 0.5, 'critical'],
    [0.3, 0.5, 'critical'],
    [1, 1, 'critical'],
  ] as const)('i=%d d=%d → %s', (i, d, status) => expect(statusOf(i, d)).toBe(status));

  it.each([
    // level5, inactive, active, missing → status, ratios
    [1000, 299, 701, 0, 'healthy', 0.299, 0], // 29.9 % inactive
    [1000, 300, 700, 0, 'warning', 0.3, 0], // 30 %
    [1000, 499, 501, 0, 'warning', 0.499, 0], // 49.9 %
    [1000, 500, 500, 0, 'critical', 0.5, 0], // 50 %
    [1000, 0, 1000, 299, 'healthy', 0, 0.299], // 29.9 % lack diaries
    [1000, 0, 1000, 300, 'warning', 0, 0.3],
    [1000, 0, 1000, 499, 'warning', 0, 0.499],
    [1000, 0, 1000, 500, 'critical', 0, 0.5],
    [0, 0, 0, 0, 'healthy', 0, 0], // none: both ratios 0
    [4, 4, 0, 0, 'critical', 1, 0], // all inactive: no active, d = 0
  ] as const)(
    '%i Level-5, %i inactive, %i active, %i missing → %s',
    (level5, inactive, active, missingDiaries, status, i, d) => {
      expect(healthOf({ level5, inactive, active, missingDiaries })).toEqual({
        status,
        inactiveRatio: i,
        missingDiaryRatio: d,
      });
    },
  );
});

describe('onboarding', () => {
  it('reaches the root through the root, or a parentless instance; not through a loop or a gap', () => {
    expect(
      chainReachesRoot([
        { id: 5, isRoot: false, parentId: 1 },
        { id: 1, isRoot: true, parentId: null },
      ]).passed,
    ).toBe(true);
    expect(chainReachesRoot([{ id: 5, isRoot: false, parentId: null }]).passed).toBe(true);
    expect(
      chainReachesRoot([
        { id: 5, isRoot: false, parentId: 6 },
        { id: 6, isRoot: false, parentId: 5 },
        { id: 5, isRoot: false, parentId: 6 },
      ]).passed,
    ).toBe(false);
    expect(chainReachesRoot([{ id: 5, isRoot: false, parentId: 9 }, undefined]).passed).toBe(false);
  });
  it('checks in order; autonomy is assumed', () => {
    const r = onboardingChecks({
      observerId: 2,
      coreBeliefsMemoryId: null,
      chain: { passed: true, detail: 'ok' },
    });
    expect(r.checks.map((c) => [c.name, c.passed])).toEqual([
      ['companion_identity', false],
      ['one_consciousness', true],
      ['autonomy_respect', true],
    ]);
    expect(r.passed).toBe(false);
    expect(
      onboardingChecks({ observerId: 2, coreBeliefsMemoryId: 7, chain: { passed: true, detail: 'ok' } })
        .passed,
    ).toBe(true);
  });
});

describe('texts', () => {
  it('encodes the beliefs first, then every rule', () => {
    const text = encodingContent(['I care.'], ['a: b', 'c: d']);
    expect(text.indexOf('I care.')).toBeLessThan(text.indexOf('a: b'));
    expect(text.endsWith('- c: d')).toBe(true);
  });
  it('counts statements and clips summaries', () => {
    expect(statementCount('One. Two! Three?\n- four\n\n')).toBe(4);
    expect(statementCount('')).toBe(0);
    const long = 'word '.repeat(200);
    expect(clipSummary(long).length).toBeLessThanOrEqual(500);
    expect(clipSummary('short')).toBe('short');
  });
});
