import { describe, expect, it } from 'vitest';
import { countUpTo, PlaybackClock } from './playback';

function manualClock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('PlaybackClock', () => {
  it('advances event time at the chosen speed only while playing', () => {
    const wall = manualClock();
    const c = new PlaybackClock(0, 100_000, wall.now);
    expect(c.position()).toBe(0);
    wall.advance(500);
    expect(c.position()).toBe(0);
    c.play();
    wall.advance(1000);
    expect(c.position()).toBe(1000);
    c.setSpeed(10);
    expect(c.position()).toBe(1000);
    wall.advance(1000);
    expect(c.position()).toBe(11_000);
    c.pause();
    wall.advance(5000);
    expect(c.position()).toBe(11_000);
    c.setSpeed(5);
    c.play();
    wall.advance(1000);
    expect(c.position()).toBe(16_000);
  });

  it('stops at the end of the range and restarts from the beginning', () => {
    const wall = manualClock();
    const c = new PlaybackClock(0, 10_000, wall.now);
    c.setSpeed(2);
    c.play();
    wall.advance(60_000);
    expect(c.position()).toBe(10_000);
    expect(c.done()).toBe(true);
    c.pause();
    c.play();
    expect(c.position()).toBe(0);
  });

  it('seeks within the range', () => {
    const wall = manualClock();
    const c = new PlaybackClock(100, 200, wall.now);
    c.seek(50);
    expect(c.position()).toBe(100);
    c.seek(150);
    expect(c.position()).toBe(150);
    c.seek(500);
    expect(c.position()).toBe(200);
  });
});

describe('countUpTo', () => {
  it('counts the events at or before a time', () => {
    const times = [1, 2, 2, 5, 9];
    expect(countUpTo(times, 0)).toBe(0);
    expect(countUpTo(times, 2)).toBe(3);
    expect(countUpTo(times, 8)).toBe(4);
    expect(countUpTo(times, 9)).toBe(5);
  });
});
