// Admin zone: the audit log (contract: "Admin zones"), newest first, filtered by method, status,
// path prefix, actor, request id and time window; paged by the server's cursor ("Older entries",
// and back to "Newer entries" by the cursors already seen); "Refresh" reads the newest page again
// (the log is written behind the responses, so what just happened may come a moment later).
import { useEffect, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';

type Entry = Schemas['AuditLogEntry'];
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'];
const PAGE = 25;

interface Filters {
  method: string;
  status: string;
  path: string;
  actorUserId: string;
  requestId: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { method: '', status: '', path: '', actorUserId: '', requestId: '', from: '', to: '' };

/** The filters as the query the API takes (empty ones left out; local date-times as ISO). */
function query(f: Filters) {
  return {
    ...(f.method ? { method: f.method } : {}),
    ...(f.status ? { status: Number(f.status) } : {}),
    ...(f.path ? { path: f.path } : {}),
    ...(f.actorUserId ? { actorUserId: Number(f.actorUserId) } : {}),
    ...(f.requestId ? { requestId: f.requestId } : {}),
    ...(f.from ? { from: new Date(f.from).toISOString() } : {}),
    ...(f.to ? { to: new Date(f.to).toISOString() } : {}),
  };
}

export default function AuditLog() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // The cursors of the pages seen so far: pages[i] opens page i + 1 (the first needs none).
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  const [logs, setLogs] = useState<Entry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  // The page the entries shown belong to (the status names it only once its entries are in).
  const [shown, setShown] = useState(1);
  // Bumped by "Refresh": the newest page of the same filters read again.
  const [reads, setReads] = useState(0);
  const page = pages.length;
  const cursor = pages[pages.length - 1];

  useEffect(() => {
    // An answer that comes after the next request went out is not shown.
    let current = true;
    setLoading(true);
    setError(null);
    void api
      .GET('/api/admin/logs', {
        params: { query: { ...query(filters), limit: PAGE, ...(cursor ? { cursor } : {}) } },
      })
      .then(({ data, error: err }) => {
        if (!current) return;
        setLoading(false);
        setShown(page);
        if (err || !data) {
          setLogs([]);
          setNext(null);
          return setError(describe(err));
        }
        setLogs(data.logs);
        setNext(data.nextCursor);
      });
    return () => {
      current = false;
    };
  }, [filters, cursor, page, reads]);

  function apply(e: FormEvent) {
    e.preventDefault();
    setFilters(draft);
    setPages([undefined]);
  }

  function refresh() {
    setPages([undefined]);
    setReads((n) => n + 1);
  }

  function reset() {
    setDraft(EMPTY);
    setFilters(EMPTY);
    setPages([undefined]);
  }

  const field = (key: keyof Filters) => ({
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
        <Alert message={error} />
        <p role="status" className="muted small">
          {loading ? 'Loading…' : `Page ${shown}: ${logs.length} ${logs.length === 1 ? 'entry' : 'entries'}`}
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
                <td>
                  {l.actorKind === 'user'
                    ? `user ${l.actorUserId}`
                    : l.actorKind === 'api_key'
                      ? `API key ${l.apiKeyId}`
                      : 'anonymous'}
                </td>
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
            disabled={loading || !next}
            onClick={() => next && setPages((ps) => [...ps, next])}
          >
            Older entries
          </button>
        </nav>
      </div>
    </>
  );
}
