// The character's memories: listed newest first (GET /api/admin/memories) or searched by meaning
// (GET /api/assistant/memory as the character, its core tier and the world's), filtered by tier
// and source; each may be edited or forgotten (PATCH / DELETE /api/admin/memories/{id}).
import { useState } from 'react';
import { api, describe } from '../../api/client';
import { useDebounced } from '../../lib/useDebounced';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { keeps, sourcesOf, tierOf, TIER_NAMES, TIERS, type MemoryFilter, type Tier } from './knowledge';

interface Shown {
  id: number;
  userId: number;
  content: string;
  source: string;
  similarity?: number | null;
  createdAt: string;
}

async function readMemories(npcId: number, q: string, source: string) {
  if (q.trim()) {
    const { data, error } = await api.GET('/api/assistant/memory', {
      params: { query: { query: q, userId: npcId, npcUserId: npcId, limit: 50 } },
    });
    return { data: (data?.memories ?? []) as Shown[], error };
  }
  const { data, error } = await api.GET('/api/admin/memories', {
    params: { query: { userId: npcId, limit: 100, ...(source ? { source: source as never } : {}) } },
  });
  return { data: (data?.memories ?? []) as Shown[], error };
}

export function MemoriesCard({ npcId, revision }: { npcId: number; revision: number }) {
  const [query, setQuery] = useState('');
  const searched = useDebounced(query, 250);
  const [filter, setFilter] = useState<MemoryFilter>({ tier: '', source: '' });
  const read = useRead(
    `studio:memories:${npcId}:${searched}:${filter.source}`,
    () => readMemories(npcId, searched, filter.source),
    { revision },
  );
  const [editing, setEditing] = useState<{ id: number; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const shown = (read.data ?? []).filter((m) => keeps(m, filter));

  async function save(id: number, content: string) {
    const { error: err } = await api.PATCH('/api/admin/memories/{id}', {
      params: { path: { id } },
      body: { content },
    });
    if (err) return setError(describe(err));
    setError(null);
    setEditing(null);
    read.set((xs) => xs?.map((x) => (x.id === id ? { ...x, content } : x)));
    setStatus('Saved.');
  }

  async function forget(id: number) {
    const { error: err } = await api.DELETE('/api/admin/memories/{id}', { params: { path: { id } } });
    if (err) return setError(describe(err));
    setError(null);
    read.set((xs) => xs?.filter((x) => x.id !== id));
    setStatus('Forgotten.');
  }

  return (
    <section className="card" aria-labelledby="memories-title">
      <h2 id="memories-title">Memories</h2>
      <input
        type="search"
        aria-label="Search the character’s memories"
        placeholder="Search by meaning"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <div className="row wrap">
        <label>
          Tier
          <select
            value={filter.tier}
            onChange={(e) => setFilter({ tier: e.target.value as Tier | '', source: '' })}
          >
            <option value="">every tier</option>
            {TIERS.map((t) => (
              <option key={t} value={t}>
                {TIER_NAMES[t]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source
          <select
            value={filter.source}
            onChange={(e) => setFilter({ ...filter, source: e.target.value as MemoryFilter['source'] })}
          >
            <option value="">every source</option>
            {sourcesOf(filter.tier).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Alert message={error ?? read.error} />
      <p role="status" className="muted small">
        {status || (read.loading ? 'Loading…' : `${shown.length} shown`)}
      </p>
      <ul className="list memories" aria-label="The character’s memories">
        {!read.loading && shown.length === 0 && <li className="muted">No memories here.</li>}
        {shown.map((m) => (
          <li key={m.id} className="item">
            {editing?.id === m.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void save(m.id, editing.text);
                }}
              >
                <label>
                  Edit memory
                  <textarea
                    rows={4}
                    value={editing.text}
                    onChange={(e) => setEditing({ id: m.id, text: e.target.value })}
                  />
                </label>
                <div className="row">
                  <button type="submit">Save</button>
                  <button type="button" className="secondary" onClick={() => setEditing(null)}>
                    Cancel
                  </button>
                </div>
              </form>
            ) : (
              <>
                <p>{m.content}</p>
                <p className="muted small">
                  <span className="badge">{tierOf(m.source) ?? '?'}</span> {m.source}
                  {m.userId !== npcId && ' · not this character’s own'} ·{' '}
                  {new Date(m.createdAt).toLocaleString()}
                  {m.similarity != null && ` · relevance ${m.similarity.toFixed(2)}`}
                </p>
                {m.userId === npcId && (
                  <div className="buttons">
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
                )}
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
