import { describe, expect, it } from 'vitest';
import type { Schemas } from '../../api/client';
import { kindLabel, runUnderWay, scheduleBody, when } from './schedules';

const task = (state: 'queued' | 'running' | 'completed' | 'failed' | null) =>
  ({
    lastRun: state && { jobId: 'j', state, startedAt: null, finishedAt: null, error: null },
  }) as Schemas['ScheduledTask'];

describe('scheduled tasks in the admin zone', () => {
  it('follows the table while a run is queued or running', () => {
    expect(runUnderWay([task('completed'), task('queued')])).toBe(true);
    expect(runUnderWay([task('running')])).toBe(true);
    expect(runUnderWay([task('failed'), task(null)])).toBe(false);
  });

  it('sends the observer only for a kind that runs for one, and UTC by default', () => {
    const form = { name: 'n', kind: 'diary_compliance', cron: '0 3 * * *', timezone: '', observerId: '8' };
    expect(scheduleBody(form)).toEqual({
      name: 'n',
      kind: 'diary_compliance',
      cron: '0 3 * * *',
      timezone: 'UTC',
      payload: { observerId: 8 },
    });
    expect(scheduleBody({ ...form, kind: 'maintenance_sweep', timezone: 'Europe/Paris' })).toMatchObject({
      timezone: 'Europe/Paris',
      payload: {},
    });
  });

  it('writes kinds as words and no time as a dash', () => {
    expect(kindLabel('observer_cycle')).toBe('observer cycle');
    expect(when(null)).toBe('—');
  });
});
