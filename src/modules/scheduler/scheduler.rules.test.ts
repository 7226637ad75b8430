import { describe, expect, it } from 'vitest';
import { cronShapeProblem, isKind, isTimeZone, TASK_KINDS } from './scheduler.rules.js';

describe('cron shape', () => {
  it.each([
    ['* * * * *', true],
    ['0 3 * * 1-5', true],
    ['*/15 0,12 1 JAN MON', true],
    ['0 3 * *', false],
    ['0 0 3 * * *', false],
    ['@hourly', false],
    ['', false],
    ['0 3 * * ;', false],
  ] as const)('%s → %s', (cron, ok) => expect(cronShapeProblem(cron) === null).toBe(ok));
});

describe('time zones', () => {
  it.each([
    ['UTC', true],
    ['Europe/Paris', true],
    ['America/Argentina/Buenos_Aires', true],
    ['Europe/Nowhere', false],
    ['+01:00', false],
    ['CET', false],
    ['utc', false],
    ['', false],
  ] as const)('%s → %s', (tz, ok) => expect(isTimeZone(tz)).toBe(ok));
});

describe('kinds and payloads', () => {
  it('knows the three kinds and checks their payloads', () => {
    expect(['observer_cycle', 'diary_compliance', 'maintenance_sweep'].every(isKind)).toBe(true);
    expect(isKind('toString')).toBe(false);
    expect(TASK_KINDS.observer_cycle.safeParse({ observerId: 1, hours: 24, limit: 10 }).success).toBe(true);
    expect(TASK_KINDS.observer_cycle.safeParse({ observerId: 1, hours: 0 }).success).toBe(false);
    expect(TASK_KINDS.diary_compliance.safeParse({ observerId: 1, limit: 3 }).success).toBe(false);
    expect(TASK_KINDS.maintenance_sweep.safeParse({ x: 1 }).success).toBe(false);
  });
});
