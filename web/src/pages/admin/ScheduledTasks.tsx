// Admin zone: scheduled tasks (contract: "Admin zones"): list with next and last run, create one,
// enable or disable it, run it now, delete it.
import { useEffect, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';

type Task = Schemas['ScheduledTask'];

const KIND_HELP: Record<string, string> = {
  observer_cycle: 'runs an observer cycle (reflection and meta-state)',
  diary_compliance: 'checks the diaries of an observer’s instances',
  maintenance_sweep: 'cleans up expired data',
};

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export default function ScheduledTasks() {
  const [tasks, setTasks] = useState<Task[]>([]);
  const [kinds, setKinds] = useState<string[]>([]);
  const [observers, setObservers] = useState<Schemas['Instance'][]>([]);
  const [form, setForm] = useState({
    name: '',
    kind: '',
    cron: '0 3 * * *',
    timezone: 'UTC',
    observerId: '',
  });
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  async function load() {
    const { data, error: err } = await api.GET('/api/admin/scheduled-tasks');
    if (err || !data) return setError(describe(err));
    setTasks(data.tasks);
    setKinds(data.kinds);
    setForm((f) => (f.kind ? f : { ...f, kind: data.kinds[0] ?? '' }));
  }

  useEffect(() => {
    void load();
    void api.GET('/api/admin/instances', { params: { query: { level: '8' } } }).then(({ data }) => {
      const list = data?.instances ?? [];
      setObservers(list);
      setForm((f) => (f.observerId ? f : { ...f, observerId: list[0] ? String(list[0].id) : '' }));
    });
  }, []);

  // While a run is queued or running, follow it to its end.
  const busy = tasks.some(
    (t) => t.lastRun && (t.lastRun.state === 'queued' || t.lastRun.state === 'running'),
  );
  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [busy]);

  const needsObserver = form.kind === 'observer_cycle' || form.kind === 'diary_compliance';

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/admin/scheduled-tasks', {
      body: {
        name: form.name,
        kind: form.kind,
        cron: form.cron,
        timezone: form.timezone || 'UTC',
        payload: needsObserver ? { observerId: Number(form.observerId) } : {},
      },
    });
    if (err || !data) return setError(describe(err));
    setStatus(`Scheduled “${data.name}”.`);
    setForm((f) => ({ ...f, name: '' }));
    await load();
  }

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
      <div className="card">
        <h2>New scheduled task</h2>
        <form className="row wrap" onSubmit={(e) => void create(e)}>
          <label className="grow">
            Task name
            <input
              required
              maxLength={100}
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.target.value })}
            />
          </label>
          <label>
            Kind
            <select value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value })}>
              {kinds.map((k) => (
                <option key={k} value={k}>
                  {k.replace(/_/g, ' ')}
                </option>
              ))}
            </select>
          </label>
          <label>
            Schedule (cron)
            <input
              required
              aria-describedby="cron-help"
              value={form.cron}
              onChange={(e) => setForm({ ...form, cron: e.target.value })}
            />
          </label>
          <label>
            Time zone
            <input value={form.timezone} onChange={(e) => setForm({ ...form, timezone: e.target.value })} />
          </label>
          {needsObserver && (
            <label>
              Observer
              <select
                value={form.observerId}
                onChange={(e) => setForm({ ...form, observerId: e.target.value })}
              >
                {observers.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.name} (#{o.id})
                  </option>
                ))}
              </select>
            </label>
          )}
          <button type="submit">Schedule</button>
        </form>
        <p id="cron-help" className="muted small">
          Five fields: minute hour day-of-month month day-of-week; “0 3 * * *” is every day at 03:00.
          {form.kind && KIND_HELP[form.kind] && ` This kind ${KIND_HELP[form.kind]}.`}
        </p>
        <Alert message={error} />
        <p role="status" className="muted">
          {status}
        </p>
      </div>
      <div className="card">
        <h2>Scheduled tasks</h2>
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
                  <td>{t.kind.replace(/_/g, ' ')}</td>
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
