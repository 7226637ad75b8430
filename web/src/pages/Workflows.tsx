// Workflows: create an instance of a definition, see instances on a board by state, move one
// through its transitions (a refused guard says what is missing), approve it; its suggestions
// (execute, dismiss, undo an automatic move); its tasks (edit, re-run) and artifacts (read, review).
import { useEffect, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../api/client';
import { Alert, Page } from '../ui';
import { Suggestions } from './workflows/Suggestions';
import { ArtifactView, TaskEditor } from './workflows/Work';

type Instance = Schemas['WorkflowInstance'];

export default function Workflows({ admin = false }: { admin?: boolean }) {
  const [definitions, setDefinitions] = useState<Schemas['WorkflowDefinition'][]>([]);
  const [machineId, setMachineId] = useState('');
  const [instances, setInstances] = useState<Instance[]>([]);
  const [selected, setSelected] = useState<Instance | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [tasks, setTasks] = useState<Schemas['WorkflowTask'][]>([]);
  const [artifacts, setArtifacts] = useState<Schemas['WorkflowArtifact'][]>([]);
  const [evidence, setEvidence] = useState({ description: '', proofUrl: '' });
  const [editing, setEditing] = useState<string | null>(null);
  const [viewing, setViewing] = useState<string | null>(null);

  useEffect(() => {
    setEditing(null);
    setViewing(null);
  }, [selected?.id]);

  // Another instance: nothing of the last one's shows while its own load.
  useEffect(() => {
    setTasks([]);
    setArtifacts([]);
  }, [selected?.id]);

  useEffect(() => {
    if (!selected) return;
    const load = () => {
      void api
        .GET('/api/protocol/instances/{id}/tasks', { params: { path: { id: selected.id } } })
        .then(({ data }) =>
          setTasks((data as { tasks?: Schemas['WorkflowTask'][] } | undefined)?.tasks ?? []),
        );
      void api
        .GET('/api/protocol/instances/{id}/artifacts', { params: { path: { id: selected.id } } })
        .then(({ data }) => setArtifacts(data?.artifacts ?? []));
    };
    load();
    // While a run is active its tasks and artifacts change: follow them, and the instance too
    // (its run ends, or it moves on).
    if (!selected.activeRunId) return;
    // (a re-run of one task is a run too)
    const timer = setInterval(() => {
      load();
      void api
        .GET('/api/protocol/instances/{id}', { params: { path: { id: selected.id } } })
        .then(({ data }) => {
          if (data && (data.version !== selected.version || data.activeRunId !== selected.activeRunId))
            setSelected(data);
        });
    }, 2000);
    return () => clearInterval(timer);
  }, [selected]);

  async function review(artifact: Schemas['WorkflowArtifact'], approve: boolean) {
    setError(null);
    const { error: err } = await api.POST('/api/protocol/artifacts/{id}/review', {
      params: { path: { id: artifact.id } },
      body: { approve },
    });
    if (err) return setError(describe(err));
    setStatus(approve ? 'Artifact approved.' : 'Artifact rejected.');
    setArtifacts((xs) =>
      xs.map((x) => (x.id === artifact.id ? { ...x, reviewStatus: approve ? 'approved' : 'rejected' } : x)),
    );
  }

  async function rerun(task: Schemas['WorkflowTask']) {
    setError(null);
    const { error: err } = await api.POST('/api/protocol/tasks/{taskId}/rerun', {
      params: { path: { taskId: task.id } },
    });
    if (err) return setError(describe(err));
    setStatus(`Running “${task.title}” again.`);
    if (selected) await refresh(selected.id);
  }

  async function loadInstances() {
    const { data, error: err } = await api.GET('/api/protocol/instances', {
      params: { query: { limit: 200 } },
    });
    if (err) setError(describe(err));
    setInstances(data?.instances ?? []);
  }

  useEffect(() => {
    void api.GET('/api/protocol/definitions').then(({ data }) => {
      const defs = data?.definitions ?? [];
      setDefinitions(defs);
      if (defs[0]) setMachineId(defs[0].machineId);
    });
    void loadInstances();
  }, []);

  async function create() {
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/instances', { body: { machineId } });
    if (err || !data) return setError(describe(err));
    setSelected(data);
    setStatus(`Created a ${data.machineId} workflow in state ${data.state}.`);
    await loadInstances();
  }

  async function refresh(id: string) {
    const { data } = await api.GET('/api/protocol/instances/{id}', { params: { path: { id } } });
    if (data) setSelected(data);
    await loadInstances();
  }

  async function transition(inst: Instance, to: string) {
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/instances/{id}/transition', {
      params: { path: { id: inst.id } },
      body: { targetState: to, expectedVersion: inst.version },
    });
    if (err || !data) {
      setStatus('');
      return setError(describe(err));
    }
    setStatus(`Moved to ${to}.`);
    await refresh(inst.id);
  }

  async function approve(inst: Instance) {
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/instances/{id}/approvals', {
      params: { path: { id: inst.id } },
      body: { expectedVersion: inst.version },
    });
    if (err || !data) return setError(describe(err));
    // An approval that satisfies the guard advances the instance by itself.
    setStatus(data.advanced ? `Approved; moved to ${data.instance.state}.` : 'Approved.');
    await refresh(inst.id);
  }

  async function attachEvidence(e: FormEvent, inst: Instance) {
    e.preventDefault();
    setError(null);
    const { error: err } = await api.POST('/api/protocol/instances/{id}/evidence', {
      params: { path: { id: inst.id } },
      body: { ...evidence, expectedVersion: inst.version },
    });
    if (err) return setError(describe(err));
    setEvidence({ description: '', proofUrl: '' });
    setStatus('Evidence attached.');
    await refresh(inst.id);
  }

  async function orchestrate(inst: Instance) {
    setError(null);
    const { error: err } = await api.POST('/api/protocol/instances/{id}/orchestrate', {
      params: { path: { id: inst.id } },
      body: {},
    });
    if (err) return setError(describe(err));
    setStatus('Orchestration started.');
    await refresh(inst.id);
  }

  const def = definitions.find((d) => d.machineId === (selected?.machineId ?? machineId));
  const states = def?.states.map((s) => s.name) ?? [...new Set(instances.map((i) => i.state))];

  return (
    <Page title="Workflows">
      <div className="card">
        <h2>New workflow</h2>
        <div className="row">
          <label>
            Definition
            <select value={machineId} onChange={(e) => setMachineId(e.target.value)}>
              {definitions.map((d) => (
                <option key={d.machineId} value={d.machineId}>
                  {d.machineId} (v{d.version})
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => void create()} disabled={!machineId}>
            Create
          </button>
        </div>
        <Alert message={error} />
        <p role="status" className="muted">
          {status}
        </p>
      </div>
      {selected && (
        <div className="card">
          <h2>
            {selected.machineId} · <span className="state">{selected.state}</span>
          </h2>
          {selected.checklist.length > 0 && (
            <ul className="small">
              {selected.checklist.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          )}
          <p className="small muted">Move to:</p>
          <div className="row" role="group" aria-label="Transitions">
            {selected.allowedTransitions.map((t) => (
              <button key={t.to} type="button" onClick={() => void transition(selected, t.to)}>
                {t.to}
              </button>
            ))}
            <button type="button" className="secondary" onClick={() => void approve(selected)}>
              Approve
            </button>
            <button
              type="button"
              className="secondary"
              disabled={Boolean(selected.activeRunId)}
              onClick={() => void orchestrate(selected)}
            >
              Orchestrate
            </button>
          </div>
          <form className="row wrap" onSubmit={(e) => void attachEvidence(e, selected)}>
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
          <Suggestions instance={selected} evidence={evidence} onChanged={() => void refresh(selected.id)} />
          {tasks.length > 0 && <h3 className="small">Tasks</h3>}
          {tasks.length > 0 && (
            <table tabIndex={0} aria-label="Tasks">
              <thead>
                <tr>
                  <th scope="col">Task</th>
                  <th scope="col">Specialty</th>
                  <th scope="col">Status</th>
                  <th scope="col">Runs</th>
                  <th scope="col">
                    <span className="sr">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tasks.map((t) => (
                  <tr key={t.id}>
                    <td>
                      {t.title}
                      {t.notes && <span className="muted small block">{t.notes}</span>}
                      {(t.assignedPersonaId !== null || t.assignedHuman) && (
                        <span className="muted small block">
                          Assigned to{' '}
                          {[
                            t.assignedPersonaId !== null ? `character ${t.assignedPersonaId}` : null,
                            t.assignedHuman,
                          ]
                            .filter(Boolean)
                            .join(' and ')}
                        </span>
                      )}
                    </td>
                    <td>{t.specialty}</td>
                    <td>{t.status.replace('_', ' ')}</td>
                    <td>{t.runCount}</td>
                    <td className="actions">
                      {!selected.archivedAt && (
                        <>
                          <button type="button" className="secondary" onClick={() => setEditing(t.id)}>
                            Edit<span className="sr"> task {t.title}</span>
                          </button>
                          <button
                            type="button"
                            className="secondary"
                            disabled={Boolean(selected.activeRunId) || t.status === 'in_progress'}
                            onClick={() => void rerun(t)}
                          >
                            Re-run<span className="sr"> task {t.title}</span>
                          </button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {editing && tasks.find((t) => t.id === editing) && (
            <TaskEditor
              key={editing}
              admin={admin}
              task={tasks.find((t) => t.id === editing)!}
              onCancel={() => setEditing(null)}
              onSaved={(t) => {
                setTasks((xs) => xs.map((x) => (x.id === t.id ? t : x)));
                setEditing(null);
                setStatus(`Task “${t.title}” saved.`);
              }}
            />
          )}
          {selected.activeRunId && <p className="muted small">A run is in progress…</p>}
          {artifacts.length > 0 && <h3 className="small">Artifacts</h3>}
          {artifacts.length > 0 && (
            <ul aria-label="Artifacts" className="list">
              {artifacts.map((a) => (
                <li key={a.id} className="row wrap artifact">
                  <span className="grow">
                    {a.summary} <span className="muted small">({a.reviewStatus})</span>
                  </span>
                  <div className="buttons">
                    <button type="button" className="secondary" onClick={() => setViewing(a.id)}>
                      View<span className="sr"> artifact {a.summary}</span>
                    </button>
                    {a.reviewStatus === 'pending' && (
                      <>
                        <button type="button" className="secondary" onClick={() => void review(a, true)}>
                          Approve artifact<span className="sr"> {a.summary}</span>
                        </button>
                        <button type="button" className="danger" onClick={() => void review(a, false)}>
                          Reject<span className="sr"> {a.summary}</span>
                        </button>
                      </>
                    )}
                  </div>
                </li>
              ))}
            </ul>
          )}
          {viewing && (
            <ArtifactView
              key={viewing}
              id={viewing}
              onClose={() => setViewing(null)}
              onReviewed={(a, advanced) => {
                setArtifacts((xs) => xs.map((x) => (x.id === a.id ? { ...x, ...a } : x)));
                setStatus(
                  `Artifact ${a.reviewStatus === 'approved' ? 'approved' : 'rejected'}${advanced ? `; moved to ${advanced}` : ''}.`,
                );
                void refresh(selected.id);
              }}
            />
          )}
        </div>
      )}
      <div className="board" aria-label="Board">
        {states.map((state) => (
          <section key={state} className="column" aria-label={state}>
            <h2 className="small">{state}</h2>
            <ul>
              {instances
                .filter((i) => i.state === state)
                .map((i) => (
                  <li key={i.id}>
                    <button
                      type="button"
                      className={selected?.id === i.id ? 'selected' : 'plain'}
                      onClick={() => setSelected(i)}
                    >
                      {typeof i.context.title === 'string' ? i.context.title : i.machineId} ·{' '}
                      {i.id.slice(0, 8)}
                    </button>
                  </li>
                ))}
            </ul>
          </section>
        ))}
      </div>
    </Page>
  );
}
