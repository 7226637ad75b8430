// Observer: pick an observer; its timeline as a feed that grows live from `/observer`, filtered
// and searched; playback of the loaded range at 1x, 2x, 5x or 10x. The feed is virtualised
// (fixed-height rows), so 10,000 events scroll smoothly.
import { useEffect, useMemo, useRef, useState } from 'react';
import { api, describe, type Schemas } from '../api/client';
import { countUpTo, PlaybackClock, SPEEDS, visibleRange, type Speed } from '../lib/playback';
import { observerSocket } from '../lib/sockets';
import type { SessionUser } from '../lib/tokens';
import { Alert, Page } from '../ui';

type Event = Schemas['TimelineEvent'];
const ROW = 56;
const VIEW = 480;

export default function Observer({ user }: { user: SessionUser }) {
  const [observers, setObservers] = useState<Schemas['Instance'][]>([]);
  const [observerId, setObserverId] = useState<number | null>(null);
  const [events, setEvents] = useState<Event[]>([]);
  const [filter, setFilter] = useState('');
  const [type, setType] = useState('');
  const [live, setLive] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [speed, setSpeed] = useState<Speed>(1);
  const [playing, setPlaying] = useState(false);
  const [shown, setShown] = useState<number | null>(null);
  const clock = useRef<PlaybackClock | null>(null);

  useEffect(() => {
    void api
      .GET('/api/admin/instances', { params: { query: { level: '8' } } })
      .then(({ data, error: err }) => {
        if (err) {
          setError(describe(err));
          return;
        }
        const list = data?.instances ?? [];
        setObservers(list);
        if (list[0]) setObserverId(list[0].id);
      });
  }, []);

  useEffect(() => {
    if (observerId === null) return;
    setEvents([]);
    // What exists before the live feed: the caller's own recent timeline, for this observer.
    void api
      .GET('/api/sync/universal-state', { params: { query: { userId: user.id, limit: 200 } } })
      .then(({ data }) => {
        const past = ((data?.timeline ?? []) as Event[]).filter((e) => e.observerId === observerId);
        setEvents((now) => merge(past, now));
      });
    const s = observerSocket(observerId);
    s.on('connect', () => setLive(true));
    s.on('disconnect', () => setLive(false));
    s.on('connect_error', (e: Error & { data?: { detail?: string } }) =>
      setError(e.data?.detail ?? e.message),
    );
    s.on('timeline_update', (e) => setEvents((now) => merge(now, [e])));
    s.connect();
    return () => {
      s.disconnect();
    };
  }, [observerId, user.id]);

  const visible = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return events.filter(
      (e) =>
        (!type || e.eventType === type) && (!q || `${e.eventType} ${e.eventText}`.toLowerCase().includes(q)),
    );
  }, [events, filter, type]);
  const times = useMemo(() => visible.map((e) => Date.parse(e.timelineAt)), [visible]);
  const types = useMemo(() => [...new Set(events.map((e) => e.eventType))].sort(), [events]);

  // Playback: reveal events up to the clock's position, one animation frame at a time.
  useEffect(() => {
    if (!playing) return;
    let frame = 0;
    const tick = () => {
      const c = clock.current;
      if (!c) return;
      setShown(countUpTo(times, c.position()));
      if (c.done()) {
        c.pause();
        setPlaying(false);
        return;
      }
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [playing, times]);

  function ensureClock(): PlaybackClock | null {
    if (times.length === 0) return null;
    if (!clock.current || clock.current.from !== times[0] || clock.current.to !== times[times.length - 1]) {
      clock.current = new PlaybackClock(times[0]!, times[times.length - 1]!, () => performance.now());
      clock.current.setSpeed(speed);
    }
    return clock.current;
  }

  function seek(t: number) {
    const c = ensureClock();
    if (!c) return;
    c.seek(t);
    setShown(countUpTo(times, c.position()));
  }

  function togglePlay() {
    if (!ensureClock() || !clock.current) return;
    if (clock.current.playing) {
      clock.current.pause();
      setPlaying(false);
    } else {
      clock.current.play();
      setPlaying(true);
    }
  }

  function chooseSpeed(s: Speed) {
    setSpeed(s);
    clock.current?.setSpeed(s);
  }

  const list = shown === null ? visible : visible.slice(0, shown);

  return (
    <Page title="Observer">
      <div className="card">
        <div className="row wrap">
          <label>
            Observer
            <select value={observerId ?? ''} onChange={(e) => setObserverId(Number(e.target.value))}>
              {observers.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name} (#{o.id})
                </option>
              ))}
            </select>
          </label>
          <label>
            Event type
            <select value={type} onChange={(e) => setType(e.target.value)}>
              <option value="">All</option>
              {types.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <label className="grow">
            Filter
            <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} />
          </label>
        </div>
        <div className="row wrap" role="group" aria-label="Playback">
          <button type="button" onClick={togglePlay} disabled={times.length === 0}>
            {playing ? 'Pause' : 'Play'}
          </button>
          {SPEEDS.map((s) => (
            <button
              key={s}
              type="button"
              className={s === speed ? 'selected' : 'secondary'}
              aria-pressed={s === speed}
              onClick={() => chooseSpeed(s)}
            >
              {s}x
            </button>
          ))}
          {shown !== null && (
            <button
              type="button"
              className="secondary"
              onClick={() => {
                clock.current?.pause();
                setPlaying(false);
                setShown(null);
              }}
            >
              Show all
            </button>
          )}
          {times.length > 1 && (
            <label className="position">
              Playback position
              <input
                type="range"
                min={times[0]}
                max={times[times.length - 1]}
                step={1000}
                value={clock.current?.position() ?? times[times.length - 1]}
                aria-valuetext={new Date(
                  clock.current?.position() ?? times[times.length - 1]!,
                ).toLocaleString()}
                onChange={(e) => seek(Number(e.target.value))}
              />
            </label>
          )}
          <span className="muted" role="status">
            {live ? 'Live' : 'Offline'} · {list.length} of {visible.length} events
          </span>
        </div>
        <Alert message={error} />
      </div>
      <VirtualFeed events={list} />
    </Page>
  );
}

function merge(a: Event[], b: Event[]): Event[] {
  const byId = new Map<number, Event>();
  for (const e of a) byId.set(e.id, e);
  for (const e of b) byId.set(e.id, e);
  return [...byId.values()].sort(
    (x, y) => Date.parse(x.timelineAt) - Date.parse(y.timelineAt) || x.id - y.id,
  );
}

function VirtualFeed({ events }: { events: Event[] }) {
  const [top, setTop] = useState(0);
  const [first, last] = visibleRange(top, VIEW, ROW, events.length);
  return (
    <div
      role="feed"
      aria-label="Timeline"
      aria-busy={false}
      className="feed card"
      tabIndex={0}
      style={{ height: VIEW }}
      onScroll={(e) => setTop(e.currentTarget.scrollTop)}
    >
      {events.length === 0 && <p className="muted">No events yet.</p>}
      <div style={{ height: events.length * ROW, position: 'relative' }}>
        {events.slice(first, last).map((e, i) => (
          <article
            key={e.id}
            aria-posinset={first + i + 1}
            aria-setsize={events.length}
            className="event"
            style={{ top: (first + i) * ROW, height: ROW }}
          >
            <span className="badge">{e.eventType}</span> {e.eventText || <em className="muted">no text</em>}
            <time className="muted small" dateTime={e.timelineAt}>
              {new Date(e.timelineAt).toLocaleString()}
            </time>
          </article>
        ))}
      </div>
    </div>
  );
}
