// A player's relationships with the characters: affinity in [-1, 1] and named flags, set by
// PUT /api/admin/data/relationships (only the fields given change).
import { useState, type FormEvent } from 'react';
import { api, describe } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { flagsOf, flagsText } from './game';
import { useCharacters } from './useStudio';

export function RelationshipsPanel({
  playerId,
  onStatus,
}: {
  playerId: number;
  onStatus: (s: string) => void;
}) {
  const read = useRead(`studio:relationships:${playerId}`, () =>
    api.GET('/api/admin/data/relationships', { params: { query: { userId: playerId } } }),
  );
  const characters = useCharacters();
  const [npcId, setNpcId] = useState('');
  const [affinity, setAffinity] = useState('0');
  const [flags, setFlags] = useState('');
  const [error, setError] = useState<string | null>(null);
  const list = read.data?.relationships ?? [];

  function pick(id: string) {
    setNpcId(id);
    const r = list.find((x) => String(x.npcUserId) === id);
    setAffinity(r ? String(r.affinity) : '0');
    setFlags(r ? flagsText(r.flags) : '');
  }

  async function save(e: FormEvent) {
    e.preventDefault();
    const a = Number(affinity);
    const f = flagsOf(flags);
    if (!npcId) return setError('Choose a character.');
    if (!(a >= -1 && a <= 1)) return setError('Affinity is a number from -1 to 1.');
    if ('error' in f) return setError(f.error);
    const { error: err } = await api.PUT('/api/admin/data/relationships', {
      body: { userId: playerId, npcUserId: Number(npcId), affinity: a, flags: f.flags },
    });
    if (err) return setError(describe(err));
    setError(null);
    onStatus('Relationship saved.');
    await read.reload();
  }

  return (
    <section className="panel" aria-labelledby="relationships-title">
      <h3 id="relationships-title">Relationships</h3>
      <Alert message={error ?? read.error} />
      <ul className="list" aria-label="Relationships">
        {!read.loading && list.length === 0 && <li className="muted small">None yet.</li>}
        {list.map((r) => (
          <li key={r.npcUserId} className="small">
            <strong>{r.npcName}</strong>: affinity {r.affinity.toFixed(2)}
            {Object.keys(r.flags).length > 0 && <span className="muted"> · {flagsText(r.flags)}</span>}
          </li>
        ))}
      </ul>
      <form aria-label="Set a relationship" onSubmit={(e) => void save(e)}>
        <div className="row wrap">
          <label>
            With
            <select value={npcId} onChange={(e) => pick(e.target.value)}>
              <option value="">Choose a character</option>
              {(characters.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Affinity
            <input
              type="number"
              step="0.1"
              min={-1}
              max={1}
              className="short"
              value={affinity}
              onChange={(e) => setAffinity(e.target.value)}
            />
          </label>
        </div>
        <label>
          Flags (name=yes or name=no, comma between)
          <input
            value={flags}
            placeholder="metAtForge=yes, owesFavour=no"
            onChange={(e) => setFlags(e.target.value)}
          />
        </label>
        <button type="submit" className="secondary">
          Save relationship
        </button>
      </form>
    </section>
  );
}
