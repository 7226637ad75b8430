// The studio's characters: the list with a search, and the card of the one chosen (or of a new
// one): name, description, personality, speaking style, goals, whose memory a player's words join,
// and the tools the character may use with their limits. The chosen one is in the address.
import { useState } from 'react';
import { useQueryParam } from '../../lib/router';
import { Alert, Link } from '../../ui';
import { matches, toolsSummary, type Character } from './card';
import { CharacterForm } from './CharacterForm';
import { useCharacters, useChosen, useItems } from './useStudio';

export default function Characters() {
  const characters = useCharacters();
  const items = useItems();
  const [chosen, choose] = useChosen();
  const [isNew, setNew] = useQueryParam('new');
  const [query, setQuery] = useState('');
  const [status, setStatus] = useState('');
  const all = characters.data ?? [];
  const shown = all.filter((c) => matches(c, query));
  const editing = chosen === null ? undefined : all.find((c) => c.id === chosen);
  const itemName = (id: number) => items.data?.find((i) => i.id === id)?.name ?? `item ${id}`;

  function open(id: number | null) {
    setStatus('');
    setNew(null);
    choose(id);
  }

  async function saved(c: Character, note: string) {
    await characters.reload();
    setNew(null);
    choose(c.id);
    setStatus(note);
  }

  return (
    <div className="studio-split">
      <aside className="card character-list" aria-labelledby="characters-title">
        <h2 id="characters-title">Characters</h2>
        <input
          type="search"
          aria-label="Search characters"
          placeholder="Search by name or description"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button
          type="button"
          onClick={() => {
            choose(null);
            setStatus('');
            setNew('1');
          }}
        >
          New character
        </button>
        <Alert message={characters.error} />
        <ul className="list picks" aria-label="Characters found">
          {!characters.loading && shown.length === 0 && (
            <li className="muted">{all.length ? 'No character matches.' : 'No characters yet.'}</li>
          )}
          {shown.map((c) => (
            <li key={c.id}>
              <button
                type="button"
                className={c.id === chosen ? 'selected pick' : 'plain pick'}
                aria-pressed={c.id === chosen}
                onClick={() => open(c.id)}
              >
                <strong>{c.name}</strong>
                {c.isAssistant && <span className="badge">assistant</span>}
                <span className="small block">{c.description || 'No description.'}</span>
                <span className="small block">
                  Player memory: {c.playerMemory} · {toolsSummary(c.tools, itemName)}
                </span>
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <div className="studio-main">
        <p role="status" className="muted">
          {status}
        </p>
        {isNew !== null || editing ? (
          <CharacterForm
            key={editing?.id ?? 'new'}
            character={editing}
            items={items.data ?? []}
            onSaved={(c, note) => void saved(c, note)}
            onDeleted={(name) => {
              void characters.reload();
              open(null);
              setStatus(`${name} deleted.`);
            }}
            onCancel={() => open(null)}
          />
        ) : chosen !== null && !characters.loading ? (
          <p className="card">No character {chosen}.</p>
        ) : (
          <p className="card muted">Choose a character from the list, or make a new one.</p>
        )}
        {editing && (
          <p className="row wrap">
            <Link to={`/studio/knowledge?character=${editing.id}`}>Train {editing.name}</Link>
            <Link to={`/studio/try?character=${editing.id}`}>Try {editing.name}</Link>
          </p>
        )}
      </div>
    </div>
  );
}
