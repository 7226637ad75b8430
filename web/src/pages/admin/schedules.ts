// Scheduled tasks as the admin zone shows and makes them: what each kind does, which kinds run
// for an observer, whether a run is under way, and what a new one sends. Pure: tested alone.
import type { Schemas } from '../../api/client';

type ScheduledTask = Schemas['ScheduledTask'];

export const KIND_HELP: Record<string, string> = {
  observer_cycle: 'runs an observer cycle (reflection and meta-state)',
  diary_compliance: 'checks the diaries of an observer’s instances',
  maintenance_sweep: 'cleans up expired data',
};

/** The kinds that run for one observer, which the form then asks for. */
export const needsObserver = (kind: string): boolean =>
  kind === 'observer_cycle' || kind === 'diary_compliance';

/** A kind as words ("observer cycle"). */
export const kindLabel = (kind: string): string => kind.replace(/_/g, ' ');

/** A time as the person's locale writes it, or a dash for none. */
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

/** Whether a run is queued or running: the table then follows it to its end. */
export const runUnderWay = (tasks: ScheduledTask[]): boolean =>
  tasks.some((t) => t.lastRun && (t.lastRun.state === 'queued' || t.lastRun.state === 'running'));

export interface ScheduleForm {
  name: string;
  kind: string;
  cron: string;
  timezone: string;
  observerId: string;
}

/** What "Schedule" sends: UTC when no time zone is given, the observer only for a kind that runs
 * for one. */
export const scheduleBody = (form: ScheduleForm) => ({
  name: form.name,
  kind: form.kind,
  cron: form.cron,
  timezone: form.timezone || 'UTC',
  payload: needsObserver(form.kind) ? { observerId: Number(form.observerId) } : {},
});
