// The "New scheduled task" card: name, kind, cron schedule, time zone, and the observer for a kind
// that runs for one; a refusal is this card's alert.
import { useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';
import { KIND_HELP, kindLabel, needsObserver, scheduleBody, type ScheduleForm } from './schedules';

export function NewScheduledTask({
  kinds,
  observers,
  status,
  onScheduled,
}: {
  kinds: string[];
  observers: Schemas['Instance'][];
  /** The zone's status line, shown in this card. */
  status: string;
  onScheduled: (task: Schemas['ScheduledTask']) => Promise<void>;
}) {
  const [draft, setDraft] = useState<ScheduleForm>({
    name: '',
    kind: '',
    cron: '0 3 * * *',
    timezone: 'UTC',
    observerId: '',
  });
  const [error, setError] = useState<string | null>(null);
  // The first kind and observer until one is picked.
  const form: ScheduleForm = {
    ...draft,
    kind: draft.kind || (kinds[0] ?? ''),
    observerId: draft.observerId || (observers[0] ? String(observers[0].id) : ''),
  };
  const field = (key: keyof ScheduleForm) => ({
    value: form[key],
    onChange: (e: { target: { value: string } }) => setDraft({ ...form, [key]: e.target.value }),
  });

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/admin/scheduled-tasks', { body: scheduleBody(form) });
    if (err || !data) return setError(describe(err));
    setDraft((f) => ({ ...f, name: '' }));
    await onScheduled(data);
  }

  return (
    <div className="card">
      <h2>New scheduled task</h2>
      <form className="row wrap" onSubmit={(e) => void create(e)}>
        <label className="grow">
          Task name
          <input required maxLength={100} {...field('name')} />
        </label>
        <label>
          Kind
          <select {...field('kind')}>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {kindLabel(k)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Schedule (cron)
          <input required aria-describedby="cron-help" {...field('cron')} />
        </label>
        <label>
          Time zone
          <input {...field('timezone')} />
        </label>
        {needsObserver(form.kind) && (
          <label>
            Observer
            <select {...field('observerId')}>
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
  );
}
