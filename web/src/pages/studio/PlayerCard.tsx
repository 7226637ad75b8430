// One player's side of the game: their inventory and energy coins (changed through the economy's
// ledger, each change with its own idempotency key), their relationships with the characters
// (affinity and flags), and their quests (status, progress and the objective they are on).
import { useState } from 'react';
import { useQueryParam } from '../../lib/router';
import { Alert } from '../../ui';
import { InventoryPanel } from './InventoryPanel';
import { PlayerQuestsPanel } from './PlayerQuestsPanel';
import { RelationshipsPanel } from './RelationshipsPanel';
import { usePlayers } from './useStudio';

export function PlayerCard() {
  const players = usePlayers();
  const [raw, setRaw] = useQueryParam('player');
  const playerId = raw !== null && /^\d+$/.test(raw) ? Number(raw) : null;
  const [status, setStatus] = useState('');
  const player = players.data?.find((p) => p.id === playerId);
  return (
    <section className="card" aria-labelledby="player-title">
      <h2 id="player-title">A player</h2>
      <div className="picker">
        <label htmlFor="game-player">Player</label>
        <select
          id="game-player"
          value={playerId ?? ''}
          onChange={(e) => {
            setStatus('');
            setRaw(e.target.value || null);
          }}
        >
          <option value="">Choose a player</option>
          {(players.data ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name || p.email} (#{p.id})
            </option>
          ))}
        </select>
      </div>
      <Alert message={players.error} />
      <p role="status" className="muted small">
        {status}
      </p>
      {playerId !== null && (
        <div className="studio-columns" key={playerId} aria-label={`${player?.name || 'Player'}’s game`}>
          <InventoryPanel playerId={playerId} onStatus={setStatus} />
          <div>
            <RelationshipsPanel playerId={playerId} onStatus={setStatus} />
            <PlayerQuestsPanel playerId={playerId} onStatus={setStatus} />
          </div>
        </div>
      )}
    </section>
  );
}
