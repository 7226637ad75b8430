// The observer's summary figures (…/summary), replaced by every `summary_update` from the socket.
import type { Schemas } from '../../api/client';

/** `none`: there is no observer to summarise (the page says so instead of loading for ever). */
export function SummaryFigures({
  summary,
  none = false,
}: {
  summary: Schemas['ObserverSummary'] | null;
  none?: boolean;
}) {
  const m = summary?.metaState;
  const figures: [string, string][] = summary
    ? [
        ['Instances', `${summary.instances.active} active of ${summary.instances.total}`],
        ['Events', String(summary.events.total)],
        [`Events, last ${summary.windowHours} h`, String(summary.events.inWindow)],
        [
          'Diaries',
          summary.diaryCompliance.compliant
            ? 'all written'
            : `${summary.diaryCompliance.missingCount} missing`,
        ],
        ['Cycles', String(m?.cycles ?? 0)],
        ['Last cycle', m?.lastCycleOutcome ?? 'none'],
        ['Last reflection', m?.lastReflectionAt ? new Date(m.lastReflectionAt).toLocaleString() : 'none'],
      ]
    : [];
  return (
    <section aria-labelledby="summary-title" className="summary">
      <h2 id="summary-title">Summary</h2>
      {none ? (
        <p className="muted">No observer, so no summary.</p>
      ) : !summary ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          <dl className="figures">
            {figures.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
          <p className="small muted" aria-live="polite">
            Updated{' '}
            <time dateTime={summary.generatedAt}>{new Date(summary.generatedAt).toLocaleTimeString()}</time>
          </p>
        </>
      )}
    </section>
  );
}
