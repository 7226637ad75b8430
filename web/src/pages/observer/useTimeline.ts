// The unified timeline of one observer under a filter: the first page, the next ones by cursor
// (older events when newest first, newer ones when oldest first), and live events that pass the
// filter merged in place. A change of observer or filter starts over; an answer to an older
// request is dropped.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import {
  matchesFilter,
  mergeEvents,
  toQuery,
  type TimelineFilter,
  type TimelineQuery,
} from '../../lib/timeline';
import { NewestOnly } from '../../lib/reads';

type Event = Schemas['TimelineEvent'];

export const PAGE_SIZE = 200;

export function useTimeline(observerId: number | null, filter: TimelineFilter) {
  const [events, setEvents] = useState<Event[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The requests of the current observer and query: a change starts afresh, and closes these.
  const requests = useRef(new NewestOnly());
  const busy = useRef(false);
  // The query by content: a new filter object with the same choices is the same query.
  const key = JSON.stringify(toQuery(filter, PAGE_SIZE));
  const query = useMemo(() => JSON.parse(key) as TimelineQuery, [key]);

  const fetchPage = useCallback(
    async (after: string | undefined) => {
      if (observerId === null) return;
      const current = requests.current.start();
      busy.current = true;
      setLoading(true);
      const { data, error: err } = await api.GET('/api/observer/observer/{id}/timeline', {
        params: { path: { id: observerId }, query: after ? { ...query, cursor: after } : query },
      });
      if (!current()) return;
      busy.current = false;
      setLoading(false);
      setLoaded(true);
      if (err || !data) {
        setError(describe(err));
        setCursor(null);
        return;
      }
      setError(null);
      setEvents((now) => mergeEvents(now, data.events, query.order));
      setCursor(data.nextCursor);
    },
    [observerId, query],
  );

  useEffect(() => {
    const mine = new NewestOnly();
    requests.current = mine;
    busy.current = false;
    setEvents([]);
    setCursor(null);
    setLoaded(false);
    void fetchPage(undefined);
    return () => mine.close();
  }, [fetchPage]);

  const loadMore = useCallback(() => {
    if (!cursor || busy.current) return;
    void fetchPage(cursor);
  }, [cursor, fetchPage]);

  const filterRef = useRef(filter);
  filterRef.current = filter;
  const addLive = useCallback((e: Event) => {
    if (!matchesFilter(e, filterRef.current)) return;
    setEvents((now) => mergeEvents(now, [e], filterRef.current.order));
  }, []);

  return { events, hasMore: cursor !== null, loading, loaded, error, loadMore, addLive };
}
