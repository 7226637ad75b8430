// Memory: the caller's memories, searched by meaning, added, edited, forgotten and exported.
import { useState, type FormEvent } from 'react';
import { api, authFetch, describe } from '../api/client';
import { useDebounced } from '../lib/useDebounced';
import { useRead } from '../lib/useRead';
import { Alert, Page } from '../ui';

type Item = { id: number; content: string; source: string; similarity?: number | null; createdAt: string };

/** The memories that match a search by meaning, or all of them for an empty search. */
async function search(q: string): Promise<{ data?: Item[]; error?: unknown }> {
  if (q.trim()) {
    const { data, error } = await api.GET('/api/assistant/memory', {
      params: { query: { query: q, limit: 50 } },
    });
    return { data: data?.memories ?? [], error };
  }
  const { data, error } = await api.GET('/api/memories');
  return { data: data?.memories ?? [], error };
}

export default function Memory() {
  const [query, setQuery] = useState('');
  // The search runs once typing pauses; only the newest search's answer shows.
  const searched = useDebounced(query, 250);
  const read = useRead(`memories:${searched}`, () => search(searched));
  const items = read.data ?? [];
  const [draft, setDraft] = useState('');
  const [editing, setEditing] = useState<{ id: number; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  async function add(e: FormEvent) {
    e.preventDefault();
    if (!draft.trim()) return;
    const { error: err } = await api.POST('/api/assistant/memory', {
      body: { content: draft, source: 'shared' },
    });
    if (err) return setError(describe(err));
    setDraft('');
    setStatus('Remembered.');
    await read.reload();
  }

  async function forget(id: number) {
    const { error: err } = await api.DELETE('/api/memories/{id}', { params: { path: { id } } });
    if (err) return setError(describe(err));
    read.set((xs) => xs?.filter((x) => x.id !== id));
    setStatus('Forgotten.');
  }

  async function save(id: number, content: string) {
    const { error: err } = await api.PATCH('/api/memories/{id}', {
      params: { path: { id } },
      body: { content },
    });
    if (err) return setError(describe(err));
    setEditing(null);
    read.set((xs) => xs?.map((x) => (x.id === id ? { ...x, content } : x)));
    setStatus('Saved.');
  }

  async function exportAll() {
    const res = await authFetch(new Request('/api/memories/export'));
    if (!res.ok) return setError(describe(await res.json()));
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = 'memories.jsonl';
    a.click();
    URL.revokeObjectURL(url);
  }

  return (
    <Page title="Memory">
      <div className="card">
        <div className="row">
          <input
            type="search"
            role="searchbox"
            aria-label="Search memories"
            placeholder="Search memories"
            className="grow"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
          />
          <button type="button" className="secondary" onClick={() => void exportAll()}>
            Export
          </button>
        </div>
        <form className="row" onSubmit={(e) => void add(e)}>
          <label className="grow">
            New memory
            <input value={draft} onChange={(e) => setDraft(e.target.value)} />
          </label>
          <button type="submit">Remember</button>
        </form>
        <Alert message={error ?? read.error} />
        <p role="status" className="muted">
          {status}
        </p>
      </div>
      <ul aria-label="Memories" className="list">
        {items.length === 0 && !read.loading && <li className="muted">No memories yet.</li>}
        {items.map((m) => (
          <li key={m.id} className="card item">
            {editing?.id === m.id ? (
              <form
                className="row"
                onSubmit={(e) => {
                  e.preventDefault();
                  void save(m.id, editing.text);
                }}
              >
                <label className="grow">
                  Edit memory
                  <input
                    value={editing.text}
                    onChange={(e) => setEditing({ id: m.id, text: e.target.value })}
                  />
                </label>
                <button type="submit">Save</button>
                <button type="button" className="secondary" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <>
                <p>{m.content}</p>
                <p className="muted small">
                  {m.source} · {new Date(m.createdAt).toLocaleString()}
                  {m.similarity != null && ` · relevance ${m.similarity.toFixed(2)}`}
                </p>
                <div className="row">
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => setEditing({ id: m.id, text: m.content })}
                  >
                    Edit<span className="sr"> memory {m.id}</span>
                  </button>
                  <button type="button" className="danger" onClick={() => void forget(m.id)}>
                    Forget<span className="sr"> memory {m.id}</span>
                  </button>
                </div>
              </>
            )}
          </li>
        ))}
      </ul>
    </Page>
  );
}
