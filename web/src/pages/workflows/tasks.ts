// An instance's tasks, as the console shows and edits them: who a task is assigned to, the status
// moves the form offers, when a re-run is offered, and what a save sends. Pure: tested alone.
//
// The status and specialty values are the generated client's (src/client/api.generated.ts, from
// the service's OpenAPI document), so they change with the server's schema. The moves between
// statuses are not in that document: they are read from the server's own declaration, a file of
// plain data with no import.
import type { Schemas } from '../../api/client';
import { TASK_MOVES } from '../../../../src/modules/workflows/workflows.vocabulary';

export type Task = Schemas['WorkflowTask'];
export type TaskStatus = Task['status'];
export type TaskSpecialty = Task['specialty'];
type Instance = Schemas['WorkflowInstance'];

/** The statuses a task's form offers: where it is, then where it may move. */
export const statusChoices = (status: TaskStatus): TaskStatus[] => [status, ...TASK_MOVES[status]];

/** A status as words ("in progress"). */
export const statusLabel = (status: TaskStatus): string => status.replace('_', ' ');

/** "character 7 and Mira": who a task is assigned to, or null when nobody is. */
export function assignees(task: Pick<Task, 'assignedPersonaId' | 'assignedHuman'>): string | null {
  const names = [
    task.assignedPersonaId !== null ? `character ${task.assignedPersonaId}` : null,
    task.assignedHuman,
  ].filter(Boolean);
  return names.length > 0 ? names.join(' and ') : null;
}

/** A task may be run again unless a run is under way, for the instance or for the task itself. */
export const canRerun = (task: Task, instance: Pick<Instance, 'activeRunId'>): boolean =>
  !instance.activeRunId && task.status !== 'in_progress';

/** The task form as typed: the character's user id and the person responsible (empty: none). */
export interface TaskForm {
  title: string;
  description: string;
  notes: string;
  status: TaskStatus;
  persona: string;
  human: string;
}

export const formOf = (task: Task): TaskForm => ({
  title: task.title,
  description: task.description,
  notes: task.notes,
  status: task.status,
  persona: task.assignedPersonaId === null ? '' : String(task.assignedPersonaId),
  human: task.assignedHuman ?? '',
});

/** What a save sends: the texts, and the assignees and status only when changed (a character is
 * checked again by the server whenever it is named). */
export function taskUpdate(task: Task, form: TaskForm) {
  const persona = form.persona.trim() === '' ? null : Number(form.persona);
  const human = form.human.trim() === '' ? null : form.human.trim();
  return {
    title: form.title,
    description: form.description,
    notes: form.notes,
    ...(persona !== task.assignedPersonaId ? { assignedPersonaId: persona } : {}),
    ...(human !== task.assignedHuman ? { assignedHuman: human } : {}),
    ...(form.status !== task.status ? { status: form.status } : {}),
  };
}
