// Reflect (POST …/reflection) and Run cycle (POST …/cycle) over the last hours: the answer shows
// (the reflection, or each step of the cycle); a refusal is an alert.
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';

type Cycle = {
  outcome: 'completed' | 'failed';
  steps: { name: string; outcome: string; detail: string }[];
  reflection: Schemas['Reflection'] | null;
};
type Result =
  | { kind: 'reflection'; reflection: Schemas['Reflection'] | null; eventCount: number }
  | { kind: 'cycle'; cycle: Cycle };

export function ActionsPanel({ observerId }: { observerId: number }) {
  const [hours, setHours] = useState('24');
  const [busy, setBusy] = useState<'reflect' | 'cycle' | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<string | null>(null);

  const body = () => (hours.trim() === '' ? {} : { hours: Number(hours) });

  async function reflect() {
    setBusy('reflect');
    setError(null);
    const { data, error: err } = await api.POST('/api/observer/observer/{id}/reflection', {
      params: { path: { id: observerId } },
      body: body(),
    });
    setBusy(null);
    if (err || !data) {
      setError(describe(err));
      return;
    }
    setResult({ kind: 'reflection', reflection: data.reflection, eventCount: data.eventCount });
  }

  async function cycle() {
    setBusy('cycle');
    setError(null);
    const { data, error: err } = await api.POST('/api/observer/observer/{id}/cycle', {
      params: { path: { id: observerId } },
      body: body(),
    });
    setBusy(null);
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
