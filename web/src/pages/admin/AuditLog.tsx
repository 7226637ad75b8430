// Admin zone: the audit log (contract: "Admin zones"), newest first, filtered by method, status,
// path prefix, actor, request id and time window; paged by the server's cursor ("Older entries",
// and back to "Newer entries" by the cursors already seen); "Refresh" reads the newest page again
// (the log is written behind the responses, so what just happened may come a moment later).
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { actorLabel, auditQuery, NO_FILTERS, type AuditFilters } from './auditLog';

const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'];
const PAGE = 25;

export default function AuditLog() {
  const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  // The cursors of the pages seen so far: pages[i] opens page i + 1 (the first needs none).
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  // Bumped by "Apply filters", "Clear filters" and "Refresh": each reads the first page afresh,
  // even of the filters already shown.
  const [asked, setAsked] = useState(0);
  const page = pages.length;
  const cursor = pages[pages.length - 1];
  // Each page of each filter is a read of its own: an answer that comes after the next request
  // went out is not shown.
  const read = useRead(JSON.stringify({ filters, cursor, page, asked }), () =>
    api.GET('/api/admin/logs', {
      params: { query: { ...auditQuery(filters), limit: PAGE, ...(cursor ? { cursor } : {}) } },
    }),
  );
  const logs = read.data?.logs ?? [];
  const next = read.data?.nextCursor ?? null;

  function apply(e: FormEvent) {
    e.preventDefault();
    setFilters(draft);
    setPages([undefined]);
    setAsked((n) => n + 1);
  }

  function refresh() {
    setPages([undefined]);
    setAsked((n) => n + 1);
  }

  function reset() {
    setDraft(NO_FILTERS);
    setFilters(NO_FILTERS);
    setPages([undefined]);
    setAsked((n) => n + 1);
  }

  const field = (key: keyof AuditFilters) => ({
    value: draft[key],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value }),
  });

  return (
    <>
      <form className="card filters" aria-label="Audit log filters" onSubmit={apply}>
        <h2>Filters</h2>
        <div className="row wrap">
          <label>
            Method
            <select {...field('method')}>
              <option value="">any</option>
              {METHODS.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label>
            Status
            <input
              type="number"
              min={100}
              max={599}
              inputMode="numeric"
              className="short"
              {...field('status')}
            />
          </label>
          <label className="grow">
            Path starts with
            <input placeholder="/api/admin" {...field('path')} />
          </label>
          <label>
            Actor user id
            <input type="number" min={1} inputMode="numeric" className="short" {...field('actorUserId')} />
          </label>
          <label className="grow">
            Request id
            <input {...field('requestId')} />
          </label>
          <label>
            From
            <input type="datetime-local" {...field('from')} />
          </label>
          <label>
            To
            <input type="datetime-local" {...field('to')} />
          </label>
        </div>
        <div className="row">
          <button type="submit">Apply filters</button>
          <button type="button" className="secondary" onClick={reset}>
            Clear filters
          </button>
        </div>
      </form>
      <div className="card">
        <h2>Entries</h2>
        <Alert message={read.error} />
        <p role="status" className="muted small">
          {read.loading
            ? 'Loading…'
            : `Page ${page}: ${logs.length} ${logs.length === 1 ? 'entry' : 'entries'}`}
        </p>
        <table tabIndex={0} aria-label="Audit log" className="nowrap">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Method</th>
              <th scope="col">Path</th>
              <th scope="col">Status</th>
              <th scope="col">Actor</th>
              <th scope="col">Duration</th>
              <th scope="col">Request</th>
            </tr>
          </thead>
          <tbody>
            {logs.map((l) => (
              <tr key={l.id}>
                <td>{new Date(l.at).toLocaleString()}</td>
                <td>{l.method}</td>
                <td className="path">{l.path}</td>
                <td>
                  {l.status}
                  {l.problemCode && <span className="muted small block">{l.problemCode}</span>}
                </td>
                <td>{actorLabel(l)}</td>
                <td>{Math.round(l.durationMs)} ms</td>
                <td>
                  <code className="small">{l.requestId}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <nav className="row pager" aria-label="Audit log pages">
          <button type="button" className="secondary" onClick={refresh}>
            Refresh
          </button>
          <button
            type="button"
            className="secondary"
            disabled={page === 1}
            onClick={() => setPages((ps) => ps.slice(0, -1))}
          >
            Newer entries
          </button>
          <button
            type="button"
            className="secondary"
            disabled={read.loading || !next}
            onClick={() => next && setPages((ps) => [...ps, next])}
          >
            Older entries
          </button>
        </nav>
      </div>
    </>
  );
}
