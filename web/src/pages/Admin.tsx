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
  const [protocols, setProtocols] = useState<Schemas['Protocol'][]>([]);
  const [channelId, setChannelId] = useState('');
  const [protocolId, setProtocolId] = useState('');
  const [channelStatus, setChannelStatus] = useState('');

  async function load() {
    const u = await api.GET('/api/admin/users', { params: { query: { limit: 200 } } });
    setUsers(u.data?.users ?? []);
    const k = await api.GET('/api/admin/api-keys');
    setKeys((k.data as { apiKeys?: Schemas['ApiKey'][] } | undefined)?.apiKeys ?? []);
    const p = await api.GET('/api/protocol/protocols');
    const list = p.data?.protocols ?? [];
    setProtocols(list);
    setProtocolId((id) => id || (list[0]?.id ?? ''));
  }

  async function configureChannel(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/chat-platform/channel/config', {
      body: { channelId, protocolId },
    });
    if (err || !data) return setError(describe(err));
    setChannelStatus(`Channel ${data.channelId} now follows ${data.protocolId}.`);
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
        <h2>Protocols</h2>
        <table tabIndex={0} aria-label="Protocols">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Category</th>
              <th scope="col">Version</th>
              <th scope="col">Kind</th>
            </tr>
          </thead>
          <tbody>
            {protocols.map((p) => (
              <tr key={p.id}>
                <td>
                  {p.name} <code className="small">{p.id}</code>
                </td>
                <td>{p.category}</td>
                <td>{p.version}</td>
                <td>
                  {(p as { immutable?: boolean }).immutable
                    ? 'ground floor (immutable)'
                    : p.builtin
                      ? 'built in'
                      : 'custom'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <h2>Channel protocol</h2>
        <form className="row wrap" onSubmit={(e) => void configureChannel(e)}>
          <label className="grow">
            Channel id
            <input required value={channelId} onChange={(e) => setChannelId(e.target.value)} />
          </label>
          <label>
            Protocol
            <select value={protocolId} onChange={(e) => setProtocolId(e.target.value)}>
              {protocols.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Save channel</button>
        </form>
        <p role="status" className="muted">
          {channelStatus}
        </p>
      </div>
      <div className="card">
        <h2>Users</h2>
        <table tabIndex={0} aria-label="Users">
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
