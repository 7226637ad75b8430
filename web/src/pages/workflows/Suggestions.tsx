// An instance's suggestions (contract: "Suggestions"): each with its suggested action ("Execute")
// or "Dismiss"; the person's choice to let free exits be taken by themselves; and "Undo" for such
// an automatic move while its undo window lasts.
import { useEffect, useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { targetOf, undoable } from './suggestions';

type Suggestion = Schemas['Suggestion'];
type Instance = Schemas['WorkflowInstance'];

/** How often the suggestions are read again while the instance is shown. */
const FOLLOW_MS = 4000;

/** An instance's suggestions and its recent history, read together, with the time they were read
 * (undo windows are counted from it) and whether the pass moved the instance by itself. */
async function readSuggestions(contextId: string) {
  const [list, past] = await Promise.all([
    api.GET('/api/suggestions/{contextId}', { params: { path: { contextId } } }),
    api.GET('/api/suggestions/history/instance/{instanceId}', {
      params: { path: { instanceId: contextId }, query: { limit: 20 } },
    }),
  ]);
  if (list.error || past.error) return { error: list.error ?? past.error };
  return {
    data: {
      suggestions: list.data?.suggestions ?? [],
      history: past.data?.history ?? [],
      at: Date.now(),
      moved: Boolean(list.data?.autoExecuted.some((a) => a.suggestion.actionType === 'TRANSITION')),
    },
  };
}

export function Suggestions({
  instance,
  evidence,
  onChanged,
}: {
  instance: Instance;
  /** The evidence form's values, for an ATTACH_EVIDENCE suggestion. */
  evidence: { description: string; proofUrl: string };
  /** Something may have moved the instance: read it again. */
  onChanged: () => void;
}) {
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string | null>(null);
  const contextId = instance.id;
  const archived = Boolean(instance.archivedAt);
  const config = useRead('suggestion-config', () => api.GET('/api/suggestions/config'));
  // A pass runs on every read and in a job after each write: follow it while the instance is shown.
  const read = useRead(`suggestions:${contextId}`, () => readSuggestions(contextId), {
    revision: instance.version,
    every: FOLLOW_MS,
  });
  const suggestions = read.data?.suggestions ?? [];
  const history = read.data?.history ?? [];
  const now = read.data?.at ?? Date.now();
  const load = read.reload;

  // A pass may have moved the instance by itself (a view or status needs no reload).
  useEffect(() => {
    if (read.data?.moved) onChanged();
  }, [read.data]);

  useEffect(() => {
    setStatus('');
    setError(null);
  }, [contextId]);

  // The instance may have been moved by a pass's job: an undoable move it does not show yet.
  const windowMinutes = config.data?.undoWindowMinutes ?? 5;
  const undoables = history.filter((s) => undoable(s, windowMinutes, now));
  useEffect(() => {
    if (undoables.some((s) => s.context.state !== undefined && instance.state === s.context.state))
      onChanged();
  }, [undoables.map((s) => s.id).join(), instance.state]);

  async function execute(s: Suggestion, cancel = false) {
    setError(null);
    const action = cancel ? s.actions.find((a) => a.type === 'CANCEL') : s.actions[0];
    if (!action) return;
    let params: Record<string, unknown> | undefined;
    if (action.type === 'ATTACH_EVIDENCE') {
      if (!evidence.description || !evidence.proofUrl)
        return setError('Fill in the evidence and its proof URL first, then execute.');
      params = { ...evidence };
    }
    if (action.type === 'REVIEW') params = { approve: true };
    const { data, error: err } = await api.POST('/api/suggestions/{contextId}/execute', {
      params: { path: { contextId } },
      body: { suggestionId: s.id, actionType: action.type, ...(params ? { params } : {}) },
    });
    if (err || !data) {
      setError(describe(err));
      await load();
      return;
    }
    setStatus(cancel ? `Dismissed: ${s.message}` : `Done: ${action.label}.`);
    onChanged();
    await load();
  }

  async function undo(s: Suggestion) {
    setError(null);
    const { data, error: err } = await api.POST('/api/suggestions/{contextId}/{id}/undo', {
      params: { path: { contextId, id: s.id } },
    });
    if (err || !data) {
      setError(describe(err));
      await load();
      return;
    }
    setStatus(
      `Undone: back to ${(data.result as { state?: string } | null)?.state ?? 'the previous state'}.`,
    );
    onChanged();
    await load();
  }

  async function setAuto(on: boolean) {
    setError(null);
    const before = config.data;
    if (before) config.set({ ...before, autoTransitionOnGuard: on });
    const { data, error: err } = await api.PUT('/api/suggestions/config', {
      body: { autoTransitionOnGuard: on },
    });
    if (err || !data) {
      config.set(before);
      return setError(describe(err));
    }
    config.set(data);
    setStatus(on ? 'Free exits are now taken by themselves.' : 'Every move now waits for you.');
    await load();
  }

  return (
    <section aria-labelledby="suggestions-title" className="suggestions">
      <h3 id="suggestions-title">Suggestions</h3>
      {config.data && (
        <label className="check">
          <input
            type="checkbox"
            checked={config.data.autoTransitionOnGuard}
            onChange={(e) => void setAuto(e.target.checked)}
          />
          Move on by itself when the next step is free (undo within {windowMinutes} min)
        </label>
      )}
      <Alert message={error ?? read.error} />
      <p role="status" className="muted small">
        {status}
      </p>
      {undoables.length > 0 && (
        <AutomaticMoves moves={undoables} windowMinutes={windowMinutes} onUndo={(m) => void undo(m)} />
      )}
      {suggestions.length === 0 ? (
        <p className="muted small">{archived ? 'This workflow is completed.' : 'No suggestion right now.'}</p>
      ) : (
        <SuggestedSteps suggestions={suggestions} onExecute={(x, cancel) => void execute(x, cancel)} />
      )}
    </section>
  );
}

/** The moves made by themselves that may still be undone, each with its "Undo". */
function AutomaticMoves({
  moves,
  windowMinutes,
  onUndo,
}: {
  moves: Suggestion[];
  windowMinutes: number;
  onUndo: (move: Suggestion) => void;
}) {
  const undoUntil = (s: Suggestion) => new Date(Date.parse(s.executedAt!) + windowMinutes * 60_000);
  return (
    <ul className="list" aria-label="Automatic moves">
      {moves.map((s) => (
        <li key={s.id} className="row wrap suggestion">
          <span className="grow">
            Moved by itself from <strong>{s.context.state ?? 'the last state'}</strong> to{' '}
            <strong>{targetOf(s)}</strong>{' '}
            <span className="muted small">(undo until {undoUntil(s).toLocaleTimeString()})</span>
          </span>
          <button type="button" className="secondary" onClick={() => onUndo(s)}>
            Undo
            <span className="sr">
              {' '}
              the move from {s.context.state} to {targetOf(s)}
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The suggested next steps, each to execute or dismiss. The buttons are named by position and
 * described by the message, so that their names stay short and never echo another control's (an
 * "Approve …" message). */
function SuggestedSteps({
  suggestions,
  onExecute,
}: {
  suggestions: Suggestion[];
  onExecute: (s: Suggestion, dismiss: boolean) => void;
}) {
  return (
    <ul className="list" aria-label="Suggested next steps">
      {suggestions.map((s, i) => (
        <li key={s.id} className="row wrap suggestion">
          <span className="grow" id={`suggestion-${s.id}`}>
            {s.message} {s.actions[0] && <span className="badge">{s.actions[0].label}</span>}
          </span>
          <div className="buttons">
            <button type="button" aria-describedby={`suggestion-${s.id}`} onClick={() => onExecute(s, false)}>
              Execute<span className="sr"> suggestion {i + 1}</span>
            </button>
            <button
              type="button"
              className="secondary"
              aria-describedby={`suggestion-${s.id}`}
              onClick={() => onExecute(s, true)}
            >
              Dismiss<span className="sr"> suggestion {i + 1}</span>
            </button>
          </div>
        </li>
      ))}
    </ul>
  );
}
