// The timeline as an ARIA feed, virtualised: rows have one height, and only those in view (with a
// few above and below) are in the DOM, so 10,000 loaded events scroll as smoothly as 10. Near the
// end it asks for the next page. Rows inserted above the view (live events, newest first) do not
// move what the person is reading; at the very top, new rows show.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { Schemas } from '../../api/client';
import { anchoredScrollTop, firstInView, nearEnd, visibleRange } from '../../lib/virtual';

type Event = Schemas['TimelineEvent'];
export const ROW = 60;
const WHEN = { dateStyle: 'short', timeStyle: 'medium' } as const;

interface Props {
  events: Event[];
  hasMore: boolean;
  loading: boolean;
  onNearEnd: () => void;
}

export function TimelineFeed({ events, hasMore, loading, onNearEnd }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [view, setView] = useState(480);
  // The row at the top of the view and its index, to keep it in place when rows come in above.
  const anchor = useRef<{ id: number; index: number } | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setView(el.clientHeight || 480);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useLayoutEffect(() => {
    const el = box.current;
    const a = anchor.current;
    if (!el || !a) return;
    const now = events[a.index]?.id === a.id ? a.index : events.findIndex((e) => e.id === a.id);
    const next = anchoredScrollTop(el.scrollTop, ROW, a.index, now);
    if (next !== el.scrollTop) {
      el.scrollTop = next;
      setTop(next);
    }
    remember(el.scrollTop);
    // Only a change of the list moves the anchor.
  }, [events]);

  function remember(scrollTop: number) {
    const i = firstInView(scrollTop, ROW, events.length);
    anchor.current = i < 0 ? null : { id: events[i]!.id, index: i };
  }

  // Ask for more when the end is in sight (also when the loaded rows do not fill the view).
  useEffect(() => {
    if (hasMore && !loading && nearEnd(top, view, ROW, events.length)) onNearEnd();
  }, [top, view, events.length, hasMore, loading, onNearEnd]);

  const [first, last] = visibleRange(top, view, ROW, events.length);
  return (
    <div
      ref={box}
      role="feed"
      aria-label="Timeline"
      aria-busy={loading}
      className="feed timeline-feed card"
      tabIndex={0}
      onScroll={(e) => {
        setTop(e.currentTarget.scrollTop);
        remember(e.currentTarget.scrollTop);
      }}
    >
      {/* A feed holds articles only: the empty state is one. */}
      {events.length === 0 && (
        <article className="muted empty">{loading ? 'Loading…' : 'No events.'}</article>
      )}
      <div style={{ height: events.length * ROW, position: 'relative' }}>
        {events.slice(first, last).map((e, i) => (
          <article
            key={e.id}
            aria-posinset={first + i + 1}
            aria-setsize={hasMore ? -1 : events.length}
            aria-labelledby={`ev-${e.id}`}
            className="event"
            style={{ top: (first + i) * ROW, height: ROW }}
          >
            <div className="event-head">
              <span className="badge">{e.eventType}</span>
              {instanceName(e) && <span className="small muted instance">{instanceName(e)}</span>}
              <time className="muted small" dateTime={e.timelineAt}>
                {new Date(e.timelineAt).toLocaleString(undefined, WHEN)}
              </time>
            </div>
            <div id={`ev-${e.id}`} className="event-text">
              {e.eventText || <em className="muted">no text</em>}
            </div>
          </article>
        ))}
      </div>
    </div>
  );
}

function instanceName(e: Event): string | null {
  const i = e.metadata.instance as { name?: unknown } | undefined;
  return typeof i?.name === 'string' ? i.name : null;
}
