import { describe, expect, it } from 'vitest';
// The server's own rule: every move the console offers must be one the server accepts.
import { taskMoveAllowed } from '../../../../src/modules/workflows/workflows.rules.js';
import type { Schemas } from '../../api/client';
import { assignees, canRerun, formOf, statusChoices, statusLabel, taskUpdate } from './tasks';

const task: Schemas['WorkflowTask'] = {
  id: 't1',
  instanceId: 'i1',
  title: 'Outline',
  description: 'The guide’s outline',
  status: 'pending',
  specialty: 'docs',
  assignedPersonaId: 7,
  assignedHuman: null,
  notes: '',
  metadata: {},
  runCount: 0,
  createdAt: '2025-01-01T00:00:00.000Z',
};

describe('task rules of the console', () => {
  it('offers only status moves the server accepts, and every one of them', () => {
    const statuses = ['pending', 'in_progress', 'completed', 'blocked'] as const;
    for (const from of statuses) {
      const offered = statusChoices(from);
      expect(offered.every((to) => taskMoveAllowed(from, to))).toBe(true);
      expect(offered.sort()).toEqual(statuses.filter((to) => taskMoveAllowed(from, to)).sort());
    }
  });

  it('offers where a task is, then where it may move', () => {
    expect(statusChoices('pending')).toEqual(['pending', 'in_progress', 'blocked']);
    expect(statusChoices('completed')).toEqual(['completed', 'in_progress']);
    expect(statusLabel('in_progress')).toBe('in progress');
  });

  it('names the assignees, or nobody', () => {
    expect(assignees(task)).toBe('character 7');
    expect(assignees({ assignedPersonaId: 7, assignedHuman: 'Mira' })).toBe('character 7 and Mira');
    expect(assignees({ assignedPersonaId: null, assignedHuman: 'Mira' })).toBe('Mira');
    expect(assignees({ assignedPersonaId: null, assignedHuman: null })).toBeNull();
  });

  it('offers a re-run unless a run is under way', () => {
    expect(canRerun(task, { activeRunId: null })).toBe(true);
    expect(canRerun(task, { activeRunId: 'r1' })).toBe(false);
    expect(canRerun({ ...task, status: 'in_progress' }, { activeRunId: null })).toBe(false);
  });

  it('sends the texts always, the assignees and status only when changed', () => {
    expect(taskUpdate(task, formOf(task))).toEqual({
      title: 'Outline',
      description: 'The guide’s outline',
      notes: '',
    });
    expect(taskUpdate(task, { ...formOf(task), persona: ' ', human: ' Mira ', status: 'blocked' })).toEqual({
      title: 'Outline',
      description: 'The guide’s outline',
      notes: '',
      assignedPersonaId: null,
      assignedHuman: 'Mira',
      status: 'blocked',
    });
  });
});
