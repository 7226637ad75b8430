// The instance shown: its state and checklist, its moves (transitions, approval, the
// orchestrator), evidence, its suggestions, tasks and artifacts. Each part keeps its own error:
// a refused move shows here, a failed re-run under the tasks, a failed review under the artifacts.
import { useState, type FormEvent } from 'react';
import type { Schemas } from '../../api/client';
import { Alert } from '../../ui';
import { ArtifactsPanel } from './ArtifactsPanel';
import { Suggestions } from './Suggestions';
import { TasksPanel } from './TasksPanel';
import { useInstanceActions, type Evidence } from './useInstanceActions';

const NO_EVIDENCE: Evidence = { description: '', proofUrl: '' };

export function InstanceCard({
  instance,
  admin,
  onStatus,
  onChanged,
}: {
  instance: Schemas['WorkflowInstance'];
  admin: boolean;
  onStatus: (status: string) => void;
  /** Something may have moved the instance: read it (and the board) again. */
  onChanged: () => Promise<void>;
}) {
  const [evidence, setEvidence] = useState<Evidence>(NO_EVIDENCE);
  const actions = useInstanceActions(instance, { onStatus, onChanged });

  async function attach(e: FormEvent) {
    e.preventDefault();
    if (await actions.attachEvidence(evidence)) setEvidence(NO_EVIDENCE);
  }

  return (
    <div className="card">
      <h2>
        {instance.machineId} · <span className="state">{instance.state}</span>
      </h2>
      {instance.checklist.length > 0 && (
        <ul className="small">
          {instance.checklist.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      )}
      <p className="small muted">Move to:</p>
      <div className="row" role="group" aria-label="Transitions">
        {instance.allowedTransitions.map((t) => (
          <button key={t.to} type="button" onClick={() => void actions.transition(t.to)}>
            {t.to}
          </button>
        ))}
        <button type="button" className="secondary" onClick={() => void actions.approve()}>
          Approve
        </button>
        <button
          type="button"
          className="secondary"
          disabled={Boolean(instance.activeRunId)}
          onClick={() => void actions.orchestrate()}
        >
          Orchestrate
        </button>
      </div>
      <form className="row wrap" onSubmit={(e) => void attach(e)}>
        <label className="grow">
          Evidence
          <input
            required
            value={evidence.description}
            onChange={(e) => setEvidence({ ...evidence, description: e.target.value })}
          />
        </label>
        <label className="grow">
          Proof URL
          <input
            type="url"
            required
            value={evidence.proofUrl}
            onChange={(e) => setEvidence({ ...evidence, proofUrl: e.target.value })}
          />
        </label>
        <button type="submit" className="secondary">
          Attach evidence
        </button>
      </form>
      <Alert message={actions.error} />
      <Suggestions instance={instance} evidence={evidence} onChanged={() => void onChanged()} />
      {/* Another instance: its own tasks and artifacts, no editor or view left open. */}
      <TasksPanel
        key={`tasks-${instance.id}`}
        instance={instance}
        admin={admin}
        onStatus={onStatus}
        onChanged={onChanged}
      />
      {instance.activeRunId && <p className="muted small">A run is in progress…</p>}
      <ArtifactsPanel
        key={`artifacts-${instance.id}`}
        instance={instance}
        onStatus={onStatus}
        onChanged={onChanged}
      />
    </div>
  );
}
