import { describe, expect, it } from 'vitest';
// The server's own moves: the console's copy must say the same (see tasks.ts).
import { TASK_MOVES as SERVER_TASK_MOVES } from '../../../../src/modules/workflows/workflows.rules.js';
import type { Schemas } from '../../api/client';
import { assignees, canRerun, formOf, statusChoices, statusLabel, TASK_MOVES, taskUpdate } from './tasks';

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
  it('offers the same status moves as the server', () => {
    expect(TASK_MOVES).toEqual(SERVER_TASK_MOVES);
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
