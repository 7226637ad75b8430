// Reflect (POST …/reflection) and Run cycle (POST …/cycle) over the last hours: the answer shows
// (the reflection, or each step of the cycle); a refusal is an alert. A reflection made elsewhere
// (another tab, someone else's cycle), received live as `reflection_generated`, shows in the same
// place: the latest outcome wins. The live copy of one of this panel's own reflections is not
// shown again, and none replaces the answer of a request still running.
import { useEffect, useRef, useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';

type Cycle = {
  outcome: 'completed' | 'failed';
  steps: { name: string; outcome: string; detail: string }[];
  reflection: Schemas['Reflection'] | null;
};
type Result =
  | {
      kind: 'reflection';
      reflection: Schemas['Reflection'] | null;
      eventCount: number;
      /** Received live: made elsewhere. */
      elsewhere?: boolean;
    }
  | { kind: 'cycle'; cycle: Cycle };

export function ActionsPanel({
  observerId,
  liveReflection,
}: {
  observerId: number;
  /** The latest `reflection_generated` of the page's socket. */
  liveReflection: Schemas['Reflection'] | null;
}) {
  const [hours, setHours] = useState('24');
  const [busy, setBusy] = useState<'reflect' | 'cycle' | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The memories of the reflections this panel's own requests made. */
  const own = useRef(new Set<number>());
  const running = useRef(false);

  useEffect(() => {
    const r = liveReflection;
    if (!r || r.observerId !== observerId || running.current || own.current.has(r.memoryId)) return;
    setResult({ kind: 'reflection', reflection: r, eventCount: r.eventCount, elsewhere: true });
  }, [liveReflection, observerId]);

  function start(kind: 'reflect' | 'cycle') {
    running.current = true;
    setBusy(kind);
    setError(null);
  }

  function done(reflection: Schemas['Reflection'] | null | undefined) {
    running.current = false;
    setBusy(null);
    if (reflection) own.current.add(reflection.memoryId);
  }

  const body = () => (hours.trim() === '' ? {} : { hours: Number(hours) });

  async function reflect() {
    start('reflect');
    const { data, error: err } = await api.POST('/api/observer/observer/{id}/reflection', {
      params: { path: { id: observerId } },
      body: body(),
    });
    done(data?.reflection);
    if (err || !data) {
      setError(describe(err));
      return;
    }
    setResult({ kind: 'reflection', reflection: data.reflection, eventCount: data.eventCount });
  }

  async function cycle() {
    start('cycle');
    const { data, error: err } = await api.POST('/api/observer/observer/{id}/cycle', {
      params: { path: { id: observerId } },
      body: body(),
    });
    done(data?.reflection);
    if (err || !data) {
      setError(describe(err));
      return;
    }
    setResult({ kind: 'cycle', cycle: data });
  }

  return (
    <section className="card" aria-labelledby="actions-title">
      <h2 id="actions-title">Reflection and cycle</h2>
      <div className="row wrap">
        <label>
          Window (hours)
          <input
            type="number"
            inputMode="numeric"
            min={1}
            max={720}
            value={hours}
            onChange={(e) => setHours(e.target.value)}
            className="hours"
          />
        </label>
        <button type="button" onClick={() => void reflect()} disabled={busy !== null}>
          {busy === 'reflect' ? 'Reflecting…' : 'Reflect'}
        </button>
        <button type="button" className="secondary" onClick={() => void cycle()} disabled={busy !== null}>
          {busy === 'cycle' ? 'Running…' : 'Run cycle'}
        </button>
      </div>
      <Alert message={error} />
      <div role="status" className="result">
        {result?.kind === 'reflection' &&
          (result.reflection ? (
            <>
              <p>
                <strong>Reflection</strong> on {result.eventCount} events
                {result.reflection.offline && <span className="muted"> (offline digest)</span>}
                {result.elsewhere && (
                  <span className="muted">
                    {' '}
                    · made elsewhere at{' '}
                    <time dateTime={result.reflection.createdAt}>
                      {new Date(result.reflection.createdAt).toLocaleTimeString()}
                    </time>
                  </span>
                )}
              </p>
              <p className="reflection">{result.reflection.text}</p>
            </>
          ) : (
            <p>No events in the window: nothing to reflect on.</p>
          ))}
        {result?.kind === 'cycle' && (
          <>
            <p>
              <strong>Cycle {result.cycle.outcome}</strong>
            </p>
            <ol className="list steps" aria-label="Cycle steps">
              {result.cycle.steps.map((s) => (
                <li key={s.name}>
                  <span className={`step ${s.outcome}`}>{s.outcome}</span> <strong>{s.name}</strong>{' '}
                  <span className="muted small detail">{s.detail}</span>
                </li>
              ))}
            </ol>
          </>
        )}
      </div>
    </section>
  );
}
