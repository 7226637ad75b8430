// The admin overview's API keys: make one with its scopes (its secret shown once, until "Done"),
// and revoke one; a refusal is this card's alert.
import { useState, type FormEvent } from 'react';
import { api, describe } from '../../api/client';
import { Alert } from '../../ui';
import { SCOPES, withScope, type Scope } from './protocols';
import { useApiKeys } from './useAdminOverview';

export function ApiKeysCard() {
  const keys = useApiKeys();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['sync:read']);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function createKey(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/admin/api-keys', { body: { name, scopes } });
    if (err || !data) return setError(describe(err));
    setSecret(data.key);
    setName('');
    await keys.reload();
  }

  async function revoke(id: number) {
    const { error: err } = await api.DELETE('/api/admin/api-keys/{id}', { params: { path: { id } } });
    if (err) return setError(describe(err));
    await keys.reload();
  }

  return (
    <div className="card">
      <h2>API keys</h2>
      <form className="row wrap" onSubmit={(e) => void createKey(e)}>
        <label className="grow">
          Key name
          <input required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <fieldset className="row">
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s} className="check">
              <input
                type="checkbox"
                checked={scopes.includes(s)}
                onChange={(e) => setScopes((xs) => withScope(xs, s, e.target.checked))}
              />
              {s}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      <Alert message={error ?? keys.error} />
      {secret && (
        <div role="status" className="secret">
          <p>Copy this key now: it is not shown again.</p>
          <code aria-label="New API key">{secret}</code>
          <button type="button" className="secondary" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      <table tabIndex={0} aria-label="API keys">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">State</th>
            <th scope="col">
              <span className="sr">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(keys.data ?? []).map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td>
                <code>{k.prefix}</code>
              </td>
              <td>{k.scopes.join(', ')}</td>
              <td>{k.revokedAt ? 'revoked' : 'active'}</td>
              <td>
                {!k.revokedAt && (
                  <button type="button" className="danger" onClick={() => void revoke(k.id)}>
                    Revoke<span className="sr"> {k.name}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
