import { describe, expect, it } from 'vitest';
import { anchoredScrollTop, firstInView, nearEnd, visibleRange } from './virtual';

describe('visibleRange', () => {
  it('renders only the rows in view, with overscan, for 10,000 rows', () => {
    expect(visibleRange(0, 480, 56, 10_000)).toEqual([0, 14]);
    const [first, last] = visibleRange(56 * 5000, 480, 56, 10_000);
    expect(first).toBe(4995);
    expect(last - first).toBeLessThan(25);
    expect(visibleRange(56 * 10_000, 480, 56, 10_000)).toEqual([9995, 10_000]);
    expect(visibleRange(0, 480, 56, 3)).toEqual([0, 3]);
  });

  it('renders nothing for an empty list, and no more than the list when scrolled past it', () => {
    expect(visibleRange(0, 480, 56, 0)).toEqual([0, 0]);
    expect(visibleRange(56 * 50, 480, 56, 10)).toEqual([10, 10]);
  });

  it('takes a partly visible row at either edge', () => {
    // 100 px down with 50 px rows and a 120 px view: rows 2, 3 and 4 (row 4 in part).
    expect(visibleRange(100, 120, 50, 100, 0)).toEqual([2, 5]);
    expect(visibleRange(110, 120, 50, 100, 0)).toEqual([2, 5]);
  });
});

describe('nearEnd', () => {
  it('is true within the threshold of the end, and for a list shorter than the view', () => {
    // 100 rows of 50 px = 5,000 px; a 500 px view.
    expect(nearEnd(0, 500, 50, 100)).toBe(false);
    expect(nearEnd(3999, 500, 50, 100)).toBe(false);
    expect(nearEnd(4000, 500, 50, 100)).toBe(true);
    expect(nearEnd(4500, 500, 50, 100)).toBe(true);
    expect(nearEnd(0, 500, 50, 3)).toBe(true);
    expect(nearEnd(0, 500, 50, 0)).toBe(true);
  });
});

describe('anchoredScrollTop', () => {
  it('moves the view down by the rows inserted above its first row', () => {
    expect(anchoredScrollTop(560, 56, 10, 13)).toBe(560 + 3 * 56);
    expect(anchoredScrollTop(560, 56, 10, 10)).toBe(560);
  });

  it('stays at the top (new rows show) and when the anchor is gone', () => {
    expect(anchoredScrollTop(0, 56, 0, 5)).toBe(0);
    expect(anchoredScrollTop(560, 56, 10, -1)).toBe(560);
  });

  it('never scrolls above the top when rows above went away', () => {
    expect(anchoredScrollTop(100, 56, 10, 0)).toBe(0);
  });
});

describe('firstInView', () => {
  it('is the row under the top edge, within the list', () => {
    expect(firstInView(0, 56, 10)).toBe(0);
    expect(firstInView(57, 56, 10)).toBe(1);
    expect(firstInView(56 * 100, 56, 10)).toBe(9);
    expect(firstInView(0, 56, 0)).toBe(-1);
  });
});
