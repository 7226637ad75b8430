// The quests: each with its objectives in order (a player's `step` is an index into them); made,
// replaced and deleted by the admin routes.
import { useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert, FormEnd } from '../../ui';

type Quest = Schemas['Quest'];
interface Draft {
  id: number | null;
  title: string;
  description: string;
  objectives: string;
  metadata?: Record<string, unknown>;
}

export function useQuests() {
  return useRead('studio:quests', async () => {
    const { data, error } = await api.GET('/api/admin/data/quests', { params: { query: { limit: 200 } } });
    return { data: data?.quests ?? [], error };
  });
}

export function QuestsCard() {
  const quests = useQuests();
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  const edit = (q?: Quest) => {
    setError(null);
    setDraft(
      q
        ? {
            id: q.id,
            title: q.title,
            description: q.description,
            objectives: q.objectives.join('\n'),
            metadata: q.metadata,
          }
        : { id: null, title: '', description: '', objectives: '' },
    );
  };

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!draft) return;
    const body = {
      title: draft.title,
      description: draft.description,
      objectives: draft.objectives
        .split('\n')
        .map((o) => o.trim())
        .filter(Boolean),
      ...(draft.metadata ? { metadata: draft.metadata } : {}),
    };
    const { data, error: err } =
      draft.id === null
        ? await api.POST('/api/admin/data/quests', { body })
        : await api.PUT('/api/admin/data/quests/{id}', { params: { path: { id: draft.id } }, body });
    if (err || !data) return setError(describe(err));
    setDraft(null);
    setStatus(`Quest “${data.title}” saved.`);
    await quests.reload();
  }

  async function remove(q: Quest) {
    const { error: err } = await api.DELETE('/api/admin/data/quests/{id}', {
      params: { path: { id: q.id } },
    });
    if (err) return setError(describe(err));
    setStatus(`Quest “${q.title}” deleted.`);
    await quests.reload();
  }

  return (
    <section className="card" aria-labelledby="quests-title">
      <div className="row heading-row">
        <h2 id="quests-title" className="grow">
          Quests
        </h2>
        <button type="button" className="secondary" onClick={() => edit()}>
          New quest
        </button>
      </div>
      <Alert message={draft ? null : (error ?? quests.error)} />
      <p role="status" className="muted small">
        {status}
      </p>
      {draft && (
        <form
          aria-label={draft.id === null ? 'New quest' : `Edit quest ${draft.title}`}
          onSubmit={(e) => void save(e)}
        >
          <label>
            Quest title
            <input
              value={draft.title}
              onChange={(e) => setDraft({ ...draft, title: e.target.value })}
              required
            />
          </label>
          <label>
            Quest description
            <textarea
              rows={2}
              value={draft.description}
              onChange={(e) => setDraft({ ...draft, description: e.target.value })}
            />
          </label>
          <label>
            Objectives, in order (one a line)
            <textarea
              rows={4}
              value={draft.objectives}
              onChange={(e) => setDraft({ ...draft, objectives: e.target.value })}
            />
          </label>
          <FormEnd error={error} submit="Save quest" onCancel={() => setDraft(null)} />
        </form>
      )}
      <ul className="list" aria-label="Quests">
        {!quests.loading && (quests.data ?? []).length === 0 && <li className="muted">No quests yet.</li>}
        {(quests.data ?? []).map((q) => (
          <li key={q.id} className="item quest">
            <p>
              <strong>{q.title}</strong> {q.description && <span className="muted">— {q.description}</span>}
            </p>
            {q.objectives.length > 0 && (
              <ol className="small objectives">
                {q.objectives.map((o, i) => (
                  <li key={i}>{o}</li>
                ))}
              </ol>
            )}
            <div className="buttons">
              <button type="button" className="secondary" onClick={() => edit(q)}>
                Edit<span className="sr"> quest {q.title}</span>
              </button>
              <button type="button" className="danger" onClick={() => void remove(q)}>
                Delete<span className="sr"> quest {q.title}</span>
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
