// The item catalogue: made, replaced and deleted by the admin routes (a deleted item leaves every
// inventory; the ledger keeps its history).
import { useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert, FormEnd } from '../../ui';
import { useItems } from './useStudio';

type Item = Schemas['Item'];
interface Draft {
  id: number | null;
  name: string;
  type: string;
  description: string;
  metadata?: Record<string, unknown>;
}

export function ItemsCard() {
  const items = useItems();
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  const edit = (i?: Item) => {
    setError(null);
    setDraft(
      i
        ? { id: i.id, name: i.name, type: i.type, description: i.description, metadata: i.metadata }
        : { id: null, name: '', type: '', description: '' },
    );
  };

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!draft) return;
    const body = {
      name: draft.name,
      type: draft.type,
      description: draft.description,
      ...(draft.metadata ? { metadata: draft.metadata } : {}),
    };
    const { data, error: err } =
      draft.id === null
        ? await api.POST('/api/admin/data/items', { body })
        : await api.PUT('/api/admin/data/items/{id}', { params: { path: { id: draft.id } }, body });
    if (err || !data) return setError(describe(err));
    setDraft(null);
    setStatus(`Item “${data.name}” saved.`);
    await items.reload();
  }

  async function remove(i: Item) {
    const { error: err } = await api.DELETE('/api/admin/data/items/{id}', { params: { path: { id: i.id } } });
    if (err) return setError(describe(err));
    setStatus(`Item “${i.name}” deleted.`);
    await items.reload();
  }

  return (
    <section className="card" aria-labelledby="items-title">
      <div className="row heading-row">
        <h2 id="items-title" className="grow">
          Items
        </h2>
        <button type="button" className="secondary" onClick={() => edit()}>
          New item
        </button>
      </div>
      <Alert message={draft ? null : (error ?? items.error)} />
      <p role="status" className="muted small">
        {status}
      </p>
      {draft && (
        <form
          aria-label={draft.id === null ? 'New item' : `Edit item ${draft.name}`}
          onSubmit={(e) => void save(e)}
        >
          <div className="row wrap">
            <label className="grow">
              Item name
              <input
                value={draft.name}
                onChange={(e) => setDraft({ ...draft, name: e.target.value })}
                required
              />
            </label>
            <label>
              Item type
              <input
                value={draft.type}
                placeholder="weapon, key…"
                onChange={(e) => setDraft({ ...draft, type: e.target.value })}
                required
              />
            </label>
          </div>
          <label>
            Item description
            <textarea
              rows={2}
              value={draft.description}
              onChange={(e) => setDraft({ ...draft, description: e.target.value })}
            />
          </label>
          <FormEnd error={error} submit="Save item" onCancel={() => setDraft(null)} />
        </form>
      )}
      <table aria-label="Items">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Description</th>
            <th scope="col">
              <span className="sr">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(items.data ?? []).map((i) => (
            <tr key={i.id}>
              <td>{i.name}</td>
              <td>{i.type}</td>
              <td>{i.description}</td>
              <td className="actions">
                <button type="button" className="secondary" onClick={() => edit(i)}>
                  Edit<span className="sr"> item {i.name}</span>
                </button>
                <button type="button" className="danger" onClick={() => void remove(i)}>
                  Delete<span className="sr"> item {i.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!items.loading && (items.data ?? []).length === 0 && <p className="muted">No items yet.</p>}
    </section>
  );
}
