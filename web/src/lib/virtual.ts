// Window math of a fixed-height virtualised list: which rows to render for a scroll position,
// when the end is near enough to fetch more, and where to scroll so that rows inserted above the
// view do not move what the person is reading.

/** The rows to render for a scroll position (with overscan), as [first, last) indexes. */
export function visibleRange(
  scrollTop: number,
  viewHeight: number,
  rowHeight: number,
  count: number,
  overscan = 5,
): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewHeight) / rowHeight) + overscan);
  return [Math.min(first, last), last];
}

/** True when at most `rows` rows are left below the view: time to fetch the next page. */
export function nearEnd(
  scrollTop: number,
  viewHeight: number,
  rowHeight: number,
  count: number,
  rows = 10,
): boolean {
  return count * rowHeight - (scrollTop + viewHeight) <= rows * rowHeight;
}

/** The scroll position that keeps the row `anchorId` where it was after the list changed: it was
 * at `before` (its old index) and is now at `after`; at the very top the view stays at the top,
 * so new rows show. */
export function anchoredScrollTop(
  scrollTop: number,
  rowHeight: number,
  before: number,
  after: number,
): number {
  if (scrollTop <= 0 || before < 0 || after < 0) return scrollTop;
  return Math.max(0, scrollTop + (after - before) * rowHeight);
}

/** The index of the first row at least partly in view. */
export function firstInView(scrollTop: number, rowHeight: number, count: number): number {
  if (count === 0) return -1;
  return Math.min(count - 1, Math.max(0, Math.floor(scrollTop / rowHeight)));
}
