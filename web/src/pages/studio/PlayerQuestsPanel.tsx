// A player's quests: each one's status, progress and the objective they are on, set by
// PUT /api/admin/data/quests/{id}/players/{userId}; a quest not yet taken may be given.
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { useQuests } from './QuestsCard';

type PlayerQuest = Schemas['PlayerQuest'];
const STATUSES: PlayerQuest['status'][] = ['active', 'completed', 'failed'];

export function PlayerQuestsPanel({
  playerId,
  onStatus,
}: {
  playerId: number;
  onStatus: (s: string) => void;
}) {
  const read = useRead(`studio:player-quests:${playerId}`, () =>
    api.GET('/api/admin/data/players/{id}/quests', { params: { path: { id: playerId } } }),
  );
  const quests = useQuests();
  const [give, setGive] = useState('');
  const [error, setError] = useState<string | null>(null);
  const held = read.data?.quests ?? [];
  const offered = (quests.data ?? []).filter((q) => !held.some((h) => h.questId === q.id));

  async function put(
    questId: number,
    body: { status?: PlayerQuest['status']; progress?: number; step?: number | null },
  ) {
    const { error: err } = await api.PUT('/api/admin/data/quests/{id}/players/{userId}', {
      params: { path: { id: questId, userId: playerId } },
      body,
    });
    if (err) return setError(describe(err));
    setError(null);
    onStatus('Quest progress saved.');
    await read.reload();
  }

  return (
    <section className="panel" aria-labelledby="player-quests-title">
      <h3 id="player-quests-title">Quests</h3>
      <Alert message={error ?? read.error} />
      <ul className="list" aria-label="The player’s quests">
        {!read.loading && held.length === 0 && <li className="muted small">No quests taken.</li>}
        {held.map((q) => (
          <li key={q.questId} className="item">
            <p>
              <strong>{q.title}</strong> · {Math.round(q.progress * 100)} %
            </p>
            <div className="row wrap">
              <label>
                Status<span className="sr"> of {q.title}</span>
                <select
                  value={q.status}
                  onChange={(e) => void put(q.questId, { status: e.target.value as PlayerQuest['status'] })}
                >
                  {STATUSES.map((s) => (
                    <option key={s} value={s}>
                      {s}
                    </option>
                  ))}
                </select>
              </label>
              {q.objectives.length > 0 && (
                <label>
                  On objective<span className="sr"> of {q.title}</span>
                  <select
                    value={q.step ?? ''}
                    onChange={(e) => {
                      const step = e.target.value === '' ? null : Number(e.target.value);
                      void put(q.questId, {
                        step,
                        ...(step === null ? {} : { progress: step / q.objectives.length }),
                      });
                    }}
                  >
                    <option value="">none</option>
                    {q.objectives.map((o, i) => (
                      <option key={i} value={i}>
                        {i + 1}. {o}
                      </option>
                    ))}
                  </select>
                </label>
              )}
            </div>
          </li>
        ))}
      </ul>
      {offered.length > 0 && (
        <div className="row wrap">
          <label>
            Give a quest
            <select value={give} onChange={(e) => setGive(e.target.value)}>
              <option value="">Choose</option>
              {offered.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.title}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            className="secondary"
            disabled={!give}
            onClick={() => {
              const q = offered.find((x) => String(x.id) === give);
              setGive('');
              if (q) void put(q.id, { status: 'active', progress: 0, step: q.objectives.length ? 0 : null });
            }}
          >
            Give quest
          </button>
        </div>
      )}
    </section>
  );
}
