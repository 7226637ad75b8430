// Admin: users (role and account type), API keys (the secret shown once), instances.
import { useEffect, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../api/client';
import { Alert, Page } from '../ui';

type Scope = Schemas['ApiKey']['scopes'][number];
const SCOPES: Scope[] = ['sync:read', 'sync:write', 'chat-platform:command'];

export default function Admin() {
  const [users, setUsers] = useState<Schemas['UserProfile'][]>([]);
  const [keys, setKeys] = useState<Schemas['ApiKey'][]>([]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['sync:read']);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function load() {
    const u = await api.GET('/api/admin/users', { params: { query: { limit: 200 } } });
    setUsers(u.data?.users ?? []);
    const k = await api.GET('/api/admin/api-keys');
    setKeys((k.data as { apiKeys?: Schemas['ApiKey'][] } | undefined)?.apiKeys ?? []);
  }
  useEffect(() => {
    void load();
  }, []);

  async function createKey(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/admin/api-keys', { body: { name, scopes } });
    if (err || !data) return setError(describe(err));
    setSecret(data.key);
    setName('');
    await load();
  }

  async function revoke(id: number) {
    const { error: err } = await api.DELETE('/api/admin/api-keys/{id}', { params: { path: { id } } });
    if (err) return setError(describe(err));
    await load();
  }

  return (
    <Page title="Admin">
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
                  onChange={(e) =>
                    setScopes((xs) => (e.target.checked ? [...xs, s] : xs.filter((x) => x !== s)))
                  }
                />
                {s}
              </label>
            ))}
          </fieldset>
          <button type="submit">Create key</button>
        </form>
        <Alert message={error} />
        {secret && (
          <div role="status" className="secret">
            <p>Copy this key now: it is not shown again.</p>
            <code aria-label="New API key">{secret}</code>
            <button type="button" className="secondary" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        )}
        <table aria-label="API keys">
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
            {keys.map((k) => (
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
      <div className="card">
        <h2>Users</h2>
        <table aria-label="Users">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Account type</th>
              <th scope="col">Verified</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td>{u.name}</td>
                <td>{u.email ?? '—'}</td>
                <td>{u.role}</td>
                <td>{u.accountType}</td>
                <td>{u.emailVerified ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
