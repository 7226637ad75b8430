// The admin overview's protocols: the table (ground-floor ones marked immutable and never offered
// for editing), a new one made from a base, one edited (one form at a time), and the channel
// configuration that picks among them.
import { useState } from 'react';
import type { Schemas } from '../../api/client';
import { Alert } from '../../ui';
import { ChannelProtocol } from './ChannelProtocol';
import { NewProtocol } from './NewProtocol';
import { ProtocolEditor } from './ProtocolEditor';
import { protocolBases, protocolOrigin } from './protocols';
import { useProtocols } from './useAdminOverview';

type Protocol = Schemas['Protocol'];

export function ProtocolsCard() {
  const read = useProtocols();
  const protocols = read.data ?? [];
  // The protocol being edited, or 'new' while one is made.
  const [editing, setEditing] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const edited = protocols.find((p) => p.id === editing && !p.immutable);

  const replaced = (saved: Protocol) => read.set((ps) => ps?.map((p) => (p.id === saved.id ? saved : p)));

  return (
    <div className="card">
      <h2>Protocols</h2>
      <Alert message={read.error} />
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
                {protocolOrigin(p) === 'immutable' ? (
                  <span className="badge locked">ground floor · immutable</span>
                ) : (
                  protocolOrigin(p)
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
          bases={protocolBases(protocols)}
          onCancel={() => setEditing(null)}
          onCreated={(created) => {
            read.set((ps) => [...(ps ?? []), created]);
            setEditing(null);
            setStatus(`Protocol ${created.name} created (${created.id}).`);
          }}
        />
      )}
      {edited && (
        <ProtocolEditor
          key={edited.id}
          protocol={edited}
          onCancel={() => setEditing(null)}
          onSaved={(saved) => {
            replaced(saved);
            setEditing(null);
            setStatus(`Protocol ${saved.name} saved (version ${saved.version}).`);
          }}
        />
      )}
      <p role="status" className="muted">
        {status}
      </p>
      <ChannelProtocol protocols={protocols} />
    </div>
  );
}
