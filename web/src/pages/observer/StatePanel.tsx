// 5D navigation: a slider over the observer's timeline span (…/5d-navigation/range); moving it
// shows the observer as of that time (…/state: its instances and their activity then, balances,
// the newest events then; …/reconstruct: its last reflection then). At the right end it follows
// the live timeline.
import { useEffect, useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { SLIDER_STEPS, sliderTime } from '../../lib/timeline';
import { useDebounced } from '../../lib/useDebounced';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';

type Range = { min: string | null; max: string | null; eventCount: number };
type State = {
  at: string;
  instances: Schemas['Instance'][];
  users: { userId: number; energy_coins: number }[];
  events: Schemas['TimelineEvent'][];
  eventCount: number;
  lastReflection: { text: string; createdAt: string } | null;
};

/** The observer as of `at`, with its last reflection then (whose failure alone still shows the
 * rest). */
async function stateAt(id: number, at: string) {
  const path = { id };
  const [s, r] = await Promise.all([
    api.GET('/api/observer/observer/{id}/5d-navigation/state', {
      params: { path, query: { at, events: 5 } },
    }),
    api.GET('/api/observer/observer/{id}/5d-navigation/reconstruct', {
      params: { path, query: { at, limit: 1 } },
    }),
  ]);
  if (s.error || !s.data) return { error: s.error ?? {} };
  const state: State = { ...s.data, lastReflection: r.data?.lastReflection ?? null };
  return { data: { state, reflectionError: r.error ? describe(r.error) : null } };
}

/** `latestAt`: the newest live event's time, which stretches the span. */
export function StatePanel({ observerId, latestAt }: { observerId: number; latestAt: string | null }) {
  const rangeRead = useRead(`range:${observerId}`, () =>
    api.GET('/api/observer/observer/{id}/5d-navigation/range', { params: { path: { id: observerId } } }),
  );
  const range: Range | null = rangeRead.data ?? null;
  const [position, setPosition] = useState(SLIDER_STEPS);

  useEffect(() => {
    if (!latestAt) return;
    rangeRead.set((r) =>
      r && (!r.max || Date.parse(latestAt) > Date.parse(r.max))
        ? { ...r, min: r.min ?? latestAt, max: latestAt, eventCount: r.eventCount + 1 }
        : r,
    );
  }, [latestAt]);

  const at = range?.min && range.max ? sliderTime(range.min, range.max, position) : null;
  // The state at the slider's time, a moment after it stops moving; the last one stays until the
  // new one comes, and only the newest answer shows.
  const settledAt = useDebounced(at, 150);
  const stateRead = useRead(
    settledAt ? `state:${observerId}:${settledAt}` : null,
    () => stateAt(observerId, settledAt!),
    { keepPrevious: true },
  );
  const state = stateRead.data?.state ?? null;
  const error = rangeRead.error ?? stateRead.error ?? stateRead.data?.reflectionError ?? null;

  const when = at ? new Date(Date.parse(at)).toLocaleString() : '';
  return (
    <section className="card" aria-labelledby="state-title">
      <h2 id="state-title">State at a time</h2>
      {!range?.min ? (
        <p className="muted">{range ? 'No events yet: nothing to travel through.' : 'Loading…'}</p>
      ) : (
        <>
          <label className="position">
            State at
            <input
              type="range"
              min={0}
              max={SLIDER_STEPS}
              step={1}
              value={position}
              aria-valuetext={when}
              onChange={(e) => setPosition(Number(e.target.value))}
            />
          </label>
          <p className="small muted">
            <time dateTime={at ?? undefined}>{when}</time>
            {position === SLIDER_STEPS && ' (latest)'}
          </p>
        </>
      )}
      <Alert message={error} />
      {state && (
        <div className="state-at">
          <dl className="figures" aria-label="Figures at that time">
            <div>
              <dt>Events by then</dt>
              <dd>{state.eventCount}</dd>
            </div>
            <div>
              <dt>Instances then</dt>
              <dd>{state.instances.length}</dd>
            </div>
            <div>
              <dt>Active then</dt>
              <dd>{state.instances.filter((i) => i.isActive).length}</dd>
            </div>
          </dl>
          {state.instances.length > 0 && (
            <ul className="list small" aria-label="Instances at that time">
              {state.instances.map((i) => (
                <li key={i.id}>
                  {i.name} <span className="muted">(Level {i.level})</span>{' '}
                  <strong className={i.isActive ? 'on' : 'off'}>{i.isActive ? 'active' : 'inactive'}</strong>
                </li>
              ))}
            </ul>
          )}
          {state.users.length > 0 && (
            <ul className="list small" aria-label="Balances at that time">
              {state.users.map((u) => (
                <li key={u.userId}>
                  User #{u.userId}: {u.energy_coins} energy coins
                </li>
              ))}
            </ul>
          )}
          <h3>Newest events then</h3>
          <ol className="list small recent" aria-label="Newest events at that time">
            {state.events.map((e) => (
              <li key={e.id}>
                <span className="badge">{e.eventType}</span> {e.eventText}
              </li>
            ))}
          </ol>
          {state.lastReflection ? (
            <details className="small">
              <summary>
                Last reflection then,{' '}
                <time dateTime={state.lastReflection.createdAt}>
                  {new Date(state.lastReflection.createdAt).toLocaleString()}
                </time>
              </summary>
              <p className="reflection">{state.lastReflection.text}</p>
            </details>
          ) : (
            <p className="small muted">No reflection by then.</p>
          )}
        </div>
      )}
    </section>
  );
}
