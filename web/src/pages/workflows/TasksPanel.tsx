// An instance's tasks: the table (assignees, specialty, status, runs), a task's editor, and a
// re-run of one task; a failed re-run is this panel's own alert.
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';
import { assignees, canRerun, statusLabel, type Task } from './tasks';
import { useTasks } from './useWorkflows';
import { TaskEditor } from './TaskEditor';

export function TasksPanel({
  instance,
  admin,
  onStatus,
  onChanged,
}: {
  instance: Schemas['WorkflowInstance'];
  admin: boolean;
  onStatus: (status: string) => void;
  /** The instance may have moved on (a run started): read it again. */
  onChanged: () => Promise<void>;
}) {
  const tasks = useTasks(instance);
  const list = tasks.data ?? [];
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const edited = list.find((t) => t.id === editing);

  async function rerun(task: Task) {
    setError(null);
    const { error: err } = await api.POST('/api/protocol/tasks/{taskId}/rerun', {
      params: { path: { taskId: task.id } },
    });
    if (err) return setError(describe(err));
    onStatus(`Running “${task.title}” again.`);
    await onChanged();
  }

  return (
    <>
      {list.length > 0 && <h3 className="small">Tasks</h3>}
      {list.length > 0 && (
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
            {list.map((t) => (
              <tr key={t.id}>
                <td>
                  {t.title}
                  {t.notes && <span className="muted small block">{t.notes}</span>}
                  {assignees(t) && <span className="muted small block">Assigned to {assignees(t)}</span>}
                </td>
                <td>{t.specialty}</td>
                <td>{statusLabel(t.status)}</td>
                <td>{t.runCount}</td>
                <td className="actions">
                  {!instance.archivedAt && (
                    <>
                      <button type="button" className="secondary" onClick={() => setEditing(t.id)}>
                        Edit<span className="sr"> task {t.title}</span>
                      </button>
                      <button
                        type="button"
                        className="secondary"
                        disabled={!canRerun(t, instance)}
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
      <Alert message={error ?? tasks.error} />
      {edited && (
        <TaskEditor
          key={edited.id}
          admin={admin}
          task={edited}
          onCancel={() => setEditing(null)}
          onSaved={(saved) => {
            tasks.set((xs) => xs?.map((x) => (x.id === saved.id ? saved : x)));
            setEditing(null);
            onStatus(`Task “${saved.title}” saved.`);
          }}
        />
      )}
    </>
  );
}
