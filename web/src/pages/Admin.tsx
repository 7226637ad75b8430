// Admin: users (role and account type), API keys (the secret shown once), protocols (new ones made
// from a base; ground-floor ones marked immutable and never offered for editing) and channel
// configuration; and the admin zones on pages of their own: scheduled tasks and the audit log.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../api/client';
import { Alert, FormEnd } from '../ui';
import { NewProtocol, ruleLines } from './admin/NewProtocol';

type Scope = Schemas['ApiKey']['scopes'][number];
const SCOPES: Scope[] = ['sync:read', 'sync:write', 'chat-platform:command'];

/** A protocol's definition as PUT takes it, with the editable fields replaced. */
function definitionOf(
  p: Schemas['Protocol'],
  edit: { description: string; tone: string; rules: string[] },
): Schemas['ProtocolUpdateInput'] {
  const common = {
    name: p.name,
    description: edit.description,
    tone: edit.tone,
    rules: edit.rules,
    tools: p.tools,
    overrides: p.overrides,
    capabilities: p.capabilities,
    ...(p.workflow ? { workflow: p.workflow } : {}),
  };
  return p.kind === 'string'
    ? { kind: 'string', template: p.template ?? '', ...common }
    : { kind: 'reference', base: p.base ?? '', ...common };
}

function ProtocolEditor({
  protocol,
  onSaved,
  onCancel,
}: {
  protocol: Schemas['Protocol'];
  onSaved: (p: Schemas['Protocol']) => void;
  onCancel: () => void;
}) {
  const [description, setDescription] = useState(protocol.description);
  const [tone, setTone] = useState(protocol.tone);
  const [rules, setRules] = useState(protocol.rules.join('\n'));
  const [error, setError] = useState<string | null>(null);
  const first = useRef<HTMLTextAreaElement>(null);
  useEffect(() => first.current?.focus(), []);

  async function save(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.PUT('/api/protocol/protocols/{id}', {
      params: { path: { id: protocol.id } },
      body: definitionOf(protocol, {
        description,
        tone,
        rules: ruleLines(rules),
      }),
    });
    if (err || !data) return setError(describe(err));
    onSaved(data);
  }

  return (
    <form
      className="task-editor"
      aria-label={`Edit protocol ${protocol.name}`}
      onSubmit={(e) => void save(e)}
    >
      <h3>Edit {protocol.name}</h3>
      <label>
        Protocol description
        <textarea ref={first} rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label>
        Tone
        <input value={tone} onChange={(e) => setTone(e.target.value)} />
      </label>
      <label>
        Rules (one a line)
        <textarea rows={4} value={rules} onChange={(e) => setRules(e.target.value)} />
      </label>
      <FormEnd error={error} submit="Save protocol" onCancel={onCancel} />
    </form>
  );
}

export default function Overview() {
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
  // The protocol being edited, or 'new' while one is made (one form at a time).
  const [editing, setEditing] = useState<string | null>(null);
  const [protocolStatus, setProtocolStatus] = useState('');

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
    <>
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
              <th scope="col">
                <span className="sr">Actions</span>
              </th>
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
                  {p.immutable ? (
                    <span className="badge locked">ground floor · immutable</span>
                  ) : p.builtin ? (
                    'built in'
                  ) : (
                    'custom'
                  )}
                </td>
                <td className="actions">
                  {p.immutable ? (
                    <span className="muted small">cannot be edited</span>
                  ) : (
                    <button type="button" className="secondary" onClick={() => setEditing(p.id)}>
                      Edit<span className="sr"> protocol {p.name}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {editing === null && (
          <div className="row">
            <button type="button" className="secondary" onClick={() => setEditing('new')}>
              New protocol
            </button>
          </div>
        )}
        {editing === 'new' && (
          <NewProtocol
            bases={protocols.filter((p) => p.kind === 'string' && !p.immutable)}
            onCancel={() => setEditing(null)}
            onCreated={(created) => {
              setProtocols((ps) => [...ps, created]);
              setEditing(null);
              setProtocolStatus(`Protocol ${created.name} created (${created.id}).`);
            }}
          />
        )}
        {editing && protocols.find((p) => p.id === editing && !p.immutable) && (
          <ProtocolEditor
            key={editing}
            protocol={protocols.find((p) => p.id === editing)!}
            onCancel={() => setEditing(null)}
            onSaved={(saved) => {
              setProtocols((ps) => ps.map((p) => (p.id === saved.id ? saved : p)));
              setEditing(null);
              setProtocolStatus(`Protocol ${saved.name} saved (version ${saved.version}).`);
            }}
          />
        )}
        <p role="status" className="muted">
          {protocolStatus}
        </p>
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
    </>
  );
}
