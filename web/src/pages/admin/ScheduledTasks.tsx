// Admin zone: scheduled tasks (contract: "Admin zones"): list with next and last run, create one,
// enable or disable it, run it now, delete it.
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { NewScheduledTask } from './NewScheduledTask';
import { kindLabel, runUnderWay, when } from './schedules';

type Task = Schemas['ScheduledTask'];

/** How often a run under way is followed. */
const FOLLOW_RUN_MS = 2000;

export default function ScheduledTasks() {
  const read = useRead('scheduled-tasks', () => api.GET('/api/admin/scheduled-tasks'), {
    every: (shown) => (shown && runUnderWay(shown.tasks) ? FOLLOW_RUN_MS : null),
  });
  const observers = useRead('observers-level-8', () =>
    api.GET('/api/admin/instances', { params: { query: { level: '8' } } }),
  );
  const tasks = read.data?.tasks ?? [];
  const load = read.reload;
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  async function toggle(t: Task) {
    setError(null);
    const { data, error: err } = await api.PATCH('/api/admin/scheduled-tasks/{id}', {
      params: { path: { id: t.id } },
      body: { enabled: !t.enabled },
    });
    if (err || !data) return setError(describe(err));
    setStatus(`“${t.name}” is ${data.enabled ? 'enabled' : 'disabled'}.`);
    await load();
  }

  async function runNow(t: Task) {
    setError(null);
    const { error: err } = await api.POST('/api/admin/scheduled-tasks/{id}/run', {
      params: { path: { id: t.id } },
    });
    if (err) return setError(describe(err));
    setStatus(`“${t.name}” queued to run now.`);
    await load();
  }

  async function remove(t: Task) {
    setError(null);
    const { error: err } = await api.DELETE('/api/admin/scheduled-tasks/{id}', {
      params: { path: { id: t.id } },
    });
    if (err) return setError(describe(err));
    setStatus(`“${t.name}” deleted.`);
    await load();
  }

  return (
    <>
      <NewScheduledTask
        kinds={read.data?.kinds ?? []}
        observers={observers.data?.instances ?? []}
        status={status}
        onScheduled={async (made) => {
          setStatus(`Scheduled “${made.name}”.`);
          await load();
        }}
      />
      <div className="card">
        <h2>Scheduled tasks</h2>
        <Alert message={error ?? read.error} />
        {tasks.length === 0 ? (
          <p className="muted">No scheduled task yet.</p>
        ) : (
          <table tabIndex={0} aria-label="Scheduled tasks">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Schedule</th>
                <th scope="col">State</th>
                <th scope="col">Next run</th>
                <th scope="col">Last run</th>
                <th scope="col">
                  <span className="sr">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td>{kindLabel(t.kind)}</td>
                  <td>
                    <code>{t.cron}</code> <span className="muted small">{t.timezone}</span>
                  </td>
                  <td>{t.enabled ? 'enabled' : 'disabled'}</td>
                  <td>{when(t.nextRunAt)}</td>
                  <td>
                    {t.lastRun ? (
                      <>
                        {t.lastRun.state}
                        <span className="muted small block">
                          {when(t.lastRun.finishedAt ?? t.lastRun.startedAt)}
                        </span>
                        {t.lastRun.error && <span className="small block">{t.lastRun.error}</span>}
                      </>
                    ) : (
                      'never'
                    )}
                  </td>
                  <td className="actions">
                    <button type="button" className="secondary" onClick={() => void runNow(t)}>
                      Run now<span className="sr"> {t.name}</span>
                    </button>
                    <button type="button" className="secondary" onClick={() => void toggle(t)}>
                      {t.enabled ? 'Disable' : 'Enable'}
                      <span className="sr"> {t.name}</span>
                    </button>
                    <button type="button" className="danger" onClick={() => void remove(t)}>
                      Delete<span className="sr"> {t.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </>
  );
}
