// Which protocol a chat-platform channel follows; a refusal is this form's alert.
import { useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';

export function ChannelProtocol({ protocols }: { protocols: Schemas['Protocol'][] }) {
  const [channelId, setChannelId] = useState('');
  // The protocol chosen: the first until one is picked.
  const [chosen, setChosen] = useState('');
  const protocolId = chosen || (protocols[0]?.id ?? '');
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string | null>(null);

  async function save(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/chat-platform/channel/config', {
      body: { channelId, protocolId },
    });
    if (err || !data) return setError(describe(err));
    setStatus(`Channel ${data.channelId} now follows ${data.protocolId}.`);
  }

  return (
    <>
      <h2>Channel protocol</h2>
      <form className="row wrap" onSubmit={(e) => void save(e)}>
        <label className="grow">
          Channel id
          <input required value={channelId} onChange={(e) => setChannelId(e.target.value)} />
        </label>
        <label>
          Protocol
          <select value={protocolId} onChange={(e) => setChosen(e.target.value)}>
            {protocols.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Save channel</button>
      </form>
      <Alert message={error} />
      <p role="status" className="muted">
        {status}
      </p>
    </>
  );
}
