// An instance's tasks (edit, assignees, status moves the contract allows, re-run) and an
// artifact's view (its content and review notes, reviewed with notes).
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert, FormEnd } from '../../ui';

type Task = Schemas['WorkflowTask'];
type Artifact = Schemas['WorkflowArtifact'];
type TaskStatus = Task['status'];

/** The task status moves of the contract ("Tasks, artifacts, orchestrator"). */
export const TASK_MOVES: Record<TaskStatus, TaskStatus[]> = {
  pending: ['in_progress', 'blocked'],
  in_progress: ['completed', 'blocked', 'pending'],
  blocked: ['pending', 'in_progress'],
  completed: ['in_progress'],
};

export function TaskEditor({
  task,
  admin = false,
  onSaved,
  onCancel,
}: {
  task: Task;
  /** An admin is offered the characters by name (the list is an admin route). */
  admin?: boolean;
  onSaved: (t: Task) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState({
    title: task.title,
    description: task.description,
    notes: task.notes,
    status: task.status,
    // The character's user id as typed (empty: none), and the person responsible (empty: none).
    persona: task.assignedPersonaId === null ? '' : String(task.assignedPersonaId),
    human: task.assignedHuman ?? '',
  });
  const [error, setError] = useState<string | null>(null);
  const [characters, setCharacters] = useState<Schemas['Npc'][]>([]);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  useEffect(() => {
    if (!admin) return;
    let live = true;
    void api
      .GET('/api/admin/data/npcs', { params: { query: { limit: 200 } } })
      .then(({ data }) => live && data && setCharacters(data.npcs));
    return () => {
      live = false;
    };
  }, [admin]);

  async function save(e: FormEvent) {
    e.preventDefault();
    setError(null);
    // Assignees are sent only when changed (a character is checked again when named).
    const persona = form.persona.trim() === '' ? null : Number(form.persona);
    const human = form.human.trim() === '' ? null : form.human.trim();
    const body = {
      title: form.title,
      description: form.description,
      notes: form.notes,
      ...(persona !== task.assignedPersonaId ? { assignedPersonaId: persona } : {}),
      ...(human !== task.assignedHuman ? { assignedHuman: human } : {}),
      ...(form.status !== task.status ? { status: form.status } : {}),
    };
    const { data, error: err } = await api.PUT('/api/protocol/tasks/{taskId}', {
      params: { path: { taskId: task.id } },
      body,
    });
    if (err || !data) return setError(describe(err));
    onSaved(data);
  }

  return (
    <form className="task-editor" aria-label={`Edit task ${task.title}`} onSubmit={(e) => void save(e)}>
      <label>
        Task title
        <input
          ref={first}
          required
          maxLength={200}
          value={form.title}
          onChange={(e) => setForm({ ...form, title: e.target.value })}
        />
      </label>
      <label>
        Task description
        <textarea
          rows={3}
          value={form.description}
          onChange={(e) => setForm({ ...form, description: e.target.value })}
        />
      </label>
      <label>
        Task notes
        <textarea rows={2} value={form.notes} onChange={(e) => setForm({ ...form, notes: e.target.value })} />
      </label>
      <div className="row wrap">
        <label>
          Assigned character (user id)
          <input
            type="number"
            min={1}
            inputMode="numeric"
            className="short"
            list={`characters-${task.id}`}
            value={form.persona}
            onChange={(e) => setForm({ ...form, persona: e.target.value })}
          />
          <datalist id={`characters-${task.id}`}>
            {characters.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </datalist>
        </label>
        <label className="grow">
          Assigned person
          <input
            maxLength={200}
            value={form.human}
            onChange={(e) => setForm({ ...form, human: e.target.value })}
          />
        </label>
      </div>
      <label>
        Task status
        <select
          value={form.status}
          onChange={(e) => setForm({ ...form, status: e.target.value as TaskStatus })}
        >
          {[task.status, ...TASK_MOVES[task.status]].map((s) => (
            <option key={s} value={s}>
              {s.replace('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      <FormEnd error={error} submit="Save task" onCancel={onCancel} />
    </form>
  );
}

export function ArtifactView({
  id,
  onClose,
  onReviewed,
}: {
  id: string;
  onClose: () => void;
  onReviewed: (a: Artifact, advanced: string | null) => void;
}) {
  const [artifact, setArtifact] = useState<Artifact>();
  const [notes, setNotes] = useState('');
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    setArtifact(undefined);
    void api
      .GET('/api/protocol/artifacts/{id}', { params: { path: { id } } })
      .then(({ data, error: err }) => {
        if (err || !data) return setError(describe(err));
        setArtifact(data);
        setNotes(data.reviewNotes ?? '');
      });
  }, [id]);
  useEffect(() => {
    if (artifact) heading.current?.focus();
  }, [artifact?.id]);

  async function review(approve: boolean) {
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/artifacts/{id}/review', {
      params: { path: { id } },
      body: { approve, ...(notes ? { notes } : {}) },
    });
    if (err || !data) return setError(describe(err));
    setArtifact({ ...data.artifact, content: artifact?.content ?? data.artifact.content });
    onReviewed(data.artifact, data.advanced ? data.advanced.to : null);
  }

  return (
    <section className="artifact-view" aria-labelledby="artifact-title">
      <div className="row wrap heading-row">
        <h3 id="artifact-title" className="grow" tabIndex={-1} ref={heading}>
          Artifact: {artifact?.summary ?? '…'}
        </h3>
        <button type="button" className="secondary" onClick={onClose}>
          Close artifact
        </button>
      </div>
      <Alert message={error} />
      {artifact && (
        <>
          <p className="muted small">
            {artifact.status} · review {artifact.reviewStatus}
            {artifact.reviewedAt && ` on ${new Date(artifact.reviewedAt).toLocaleString()}`}
          </p>
          <pre className="content" tabIndex={0} aria-label="Artifact content">
            {artifact.content || '(empty)'}
          </pre>
          {artifact.reviewStatus === 'pending' && artifact.status === 'ready' ? (
            <>
              <label>
                Review notes
                <textarea
                  rows={2}
                  maxLength={2000}
                  value={notes}
                  onChange={(e) => setNotes(e.target.value)}
                />
              </label>
              <div className="row">
                <button type="button" onClick={() => void review(true)}>
                  Approve with notes
                </button>
                <button type="button" className="danger" onClick={() => void review(false)}>
                  Reject with notes
                </button>
              </div>
            </>
          ) : (
            <p>
              <strong>Review notes:</strong> {artifact.reviewNotes || 'none'}
            </p>
          )}
        </>
      )}
    </section>
  );
}
