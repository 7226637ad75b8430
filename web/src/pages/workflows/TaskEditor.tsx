// A task's editor: its title, description and notes, its assignees (an admin is offered the
// characters by name) and the status moves the contract allows; a refusal is the form's alert.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describe } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { FormEnd } from '../../ui';
import { formOf, statusChoices, statusLabel, taskUpdate, type Task, type TaskForm } from './tasks';

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
  const [form, setForm] = useState<TaskForm>(() => formOf(task));
  const [error, setError] = useState<string | null>(null);
  // The characters by name, for an admin (the list is an admin route); others type the id.
  const characters = useRead(admin ? 'characters' : null, () =>
    api.GET('/api/admin/data/npcs', { params: { query: { limit: 200 } } }),
  );
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  async function save(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.PUT('/api/protocol/tasks/{taskId}', {
      params: { path: { taskId: task.id } },
      body: taskUpdate(task, form),
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
            {(characters.data?.npcs ?? []).map((c) => (
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
          onChange={(e) => setForm({ ...form, status: e.target.value as Task['status'] })}
        >
          {statusChoices(task.status).map((s) => (
            <option key={s} value={s}>
              {statusLabel(s)}
            </option>
          ))}
        </select>
      </label>
      <FormEnd error={error} submit="Save task" onCancel={onCancel} />
    </form>
  );
}
