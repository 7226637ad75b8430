// Observer: pick an observer (every one for a CSO or an admin, else the user's own); its summary (live from `summary_update`); its unified timeline as a
// virtualised feed, filtered, searched and paged by cursor, growing live from `/observer`; playback
// of the loaded range at 1x, 2x, 5x or 10x; its state at a time (5D); Reflect and Run cycle, and
// reflections made elsewhere (`reflection_generated`).
// The parts live in ./observer/, one job each.
import { useEffect, useMemo, useState } from 'react';
import { api, type Schemas } from '../api/client';
import { countLive, NO_FILTER, type TimelineFilter } from '../lib/timeline';
import { useDebounced } from '../lib/useDebounced';
import { useRead } from '../lib/useRead';
import type { SessionUser } from '../lib/tokens';
import { Alert, Page } from '../ui';
import { ActionsPanel } from './observer/ActionsPanel';
import { Filters } from './observer/Filters';
import { PlaybackControls, usePlayback } from './observer/Playback';
import { StatePanel } from './observer/StatePanel';
import { SummaryFigures } from './observer/SummaryFigures';
import { TimelineFeed } from './observer/TimelineFeed';
import { useObserverSocket } from './observer/useObserverSocket';
import { useTimeline } from './observer/useTimeline';
import './observer/observer.css';

type Event = Schemas['TimelineEvent'];

export default function Observer(_props: { user: SessionUser }) {
  // The observers this user may read: every one for a CSO or an admin, else their own.
  const observersRead = useRead('observers', () => api.GET('/api/observer/observers'));
  const observers = observersRead.data?.observers;
  // The observer watched: the first until one is picked.
  const [picked, setPicked] = useState<number | null>(null);
  const observerId = picked ?? observers?.[0]?.id ?? null;
  const [draft, setDraft] = useState<TimelineFilter>(NO_FILTER);
  const q = useDebounced(draft.q, 300);
  const filter = useMemo(() => ({ ...draft, q }), [draft, q]);
  const timeline = useTimeline(observerId, filter);
  const summaryRead = useRead(observerId === null ? null : `summary:${observerId}`, () =>
    api.GET('/api/observer/observer/{id}/summary', {
      params: { path: { id: observerId! }, query: { hours: 24 } },
    }),
  );
  const summary = summaryRead.data ?? null;
  // The observer's instances now, for the instance filter (read again when one changes).
  const instancesRead = useRead(observerId === null ? null : `instances:${observerId}`, () =>
    api.GET('/api/observer/observer/{id}/5d-navigation/state', {
      params: { path: { id: observerId! }, query: { at: new Date().toISOString(), events: 1 } },
    }),
  );
  const instances = instancesRead.data?.instances ?? [];
  const [latestAt, setLatestAt] = useState<string | null>(null);
  const [liveReflection, setLiveReflection] = useState<Schemas['Reflection'] | null>(null);

  useEffect(() => {
    if (observerId === null) return;
    setLatestAt(null);
    setLiveReflection(null);
    setDraft((d) => ({ ...d, instanceId: '' }));
  }, [observerId]);

  const { addLive } = timeline;
  const socket = useObserverSocket(observerId, {
    timeline_update: (e: Event) => {
      addLive(e);
      setLatestAt(e.timelineAt);
      summaryRead.set((s) => s && countLive(s, e));
      if (e.eventType.startsWith('instance_')) void instancesRead.reload();
    },
    summary_update: (s) => {
      if (s.observerId === observerId) summaryRead.set(s);
    },
    // A reflection made elsewhere (another tab, a scheduled cycle): shown in the actions panel.
    reflection_generated: (r) => {
      if (r.observerId === observerId) setLiveReflection(r);
    },
  });

  const events = timeline.events;
  const asc = draft.order === 'asc';
  const times = useMemo(() => {
    const t = events.map((e) => Date.parse(e.timelineAt));
    return asc ? t : t.reverse();
  }, [events, asc]);
  const playback = usePlayback(times);
  const shown = playback.shown;
  const list = useMemo(() => {
    if (shown === null) return events;
    return asc ? events.slice(0, shown) : events.slice(events.length - shown);
  }, [events, shown, asc]);
  const types = useMemo(() => {
    const all = new Set(events.map((e) => e.eventType));
    for (const t of Object.keys(summary?.events.byType ?? {})) all.add(t);
    if (draft.eventType) all.add(draft.eventType);
    return [...all].sort();
  }, [events, summary, draft.eventType]);

  return (
    <Page title="Observer">
      <div className="card observer-head">
        <label className="observer-pick">
          <span id="observer-pick">Observer</span>
          <select
            aria-labelledby="observer-pick"
            value={observerId ?? ''}
            onChange={(e) => setPicked(Number(e.target.value))}
          >
            {(observers ?? []).map((o) => (
              <option key={o.id} value={o.id}>
                {o.name} (#{o.id})
              </option>
            ))}
          </select>
        </label>
        {observers?.length === 0 && (
          <p className="muted" role="status">
            You have no observer to watch: an administrator can make you the owner of one.
          </p>
        )}
        <Alert message={observersRead.error ?? summaryRead.error ?? socket.error} />
        <SummaryFigures summary={summary} none={observers?.length === 0} />
      </div>
      <div className="observer-layout">
        <div className="observer-main">
          <section className="card" aria-labelledby="timeline-title">
            <h2 id="timeline-title">Timeline</h2>
            <Filters filter={draft} onChange={setDraft} types={types} instances={instances} />
            <PlaybackControls p={playback} times={times} />
            <p className="muted small" role="status">
              {socket.live ? 'Live' : 'Offline'} · {list.length} of {events.length} events
              {timeline.hasMore ? ' · more to load' : timeline.loaded ? ' · all loaded' : ''}
            </p>
            <Alert message={timeline.error} />
          </section>
          <TimelineFeed
            events={list}
            hasMore={timeline.hasMore && shown === null}
            loading={timeline.loading}
            onNearEnd={timeline.loadMore}
          />
          {timeline.hasMore && (
            <button
              type="button"
              className="secondary"
              disabled={timeline.loading}
              onClick={timeline.loadMore}
            >
              {asc ? 'Load newer events' : 'Load older events'}
            </button>
          )}
        </div>
        <div className="observer-side">
          {observerId !== null && (
            <StatePanel key={`state-${observerId}`} observerId={observerId} latestAt={latestAt} />
          )}
          {observerId !== null && (
            <ActionsPanel
              key={`actions-${observerId}`}
              observerId={observerId}
              liveReflection={liveReflection}
            />
          )}
        </div>
      </div>
    </Page>
  );
}
