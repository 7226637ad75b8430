// The orchestrator's pure decisions (contract "Tasks, artifacts, orchestrator"): which tasks a run
// seeds (the instance's context, the model's structured answer, or the fixed three of each flow),
// which persona takes a task, what a task's model call is asked, and the offline draft.
import { z } from 'zod';
import { jsonObjectIn } from '../../platform/models/json-answer.js';
import { SPECIALTIES, type Specialty, type TaskRunStatus, type TaskStatus } from './workflows.tables.js';

export interface SeedTask {
  title: string;
  description: string;
  specialty: Specialty;
}

/** Offline or unparseable: three fixed tasks per flow (docs, code, tests). */
export const FIXED_TASKS: Record<string, readonly SeedTask[]> = {
  documentation_flow_v1: [
    {
      title: 'Write the documentation',
      description: 'Document the goal, its design and its use.',
      specialty: 'docs',
    },
    { title: 'Implement the change', description: 'Build what the goal asks for.', specialty: 'code' },
    { title: 'Write the tests', description: 'Cover the change with tests or a demo.', specialty: 'tests' },
  ],
  triage_flow_v1: [
    {
      title: 'Describe the problem',
      description: 'Record the symptoms, their cause and how to reproduce them.',
      specialty: 'docs',
    },
    {
      title: 'Fix the problem',
      description: 'Change the code so the problem no longer occurs.',
      specialty: 'code',
    },
    {
      title: 'Add a regression test',
      description: 'A test that fails before the fix and passes after it.',
      specialty: 'tests',
    },
  ],
};

export function fixedTasks(machineId: string): SeedTask[] {
  return [...(FIXED_TASKS[machineId] ?? FIXED_TASKS.documentation_flow_v1!)].map((t) => ({ ...t }));
}

const contextTask = z.object({
  title: z.string().trim().min(1).max(200),
  description: z.string().max(4000).optional(),
  specialty: z.enum(SPECIALTIES).optional(),
});

/** The instance's `context.tasks` (checked at creation; read defensively), or null when none. */
export function contextTasks(context: Record<string, unknown>): SeedTask[] | null {
  const parsed = z.array(contextTask).min(1).max(20).safeParse(context.tasks);
  if (!parsed.success) return null;
  return parsed.data.map((t) => ({
    title: t.title,
    description: t.description ?? '',
    specialty: t.specialty ?? 'general',
  }));
}

const seededSchema = z.object({
  tasks: z
    .array(
      z.object({
        title: z.string().trim().min(1).max(200),
        description: z.string().max(4000).optional(),
        specialty: z.string().optional(),
      }),
    )
    .min(1)
    .max(8),
});

/** The seeding call's request: a system text and the user's part. */
export function seedPrompt(i: { machineId: string; state: string; context: Record<string, unknown> }): {
  system: string;
  user: string;
} {
  return {
    system: [
      'You break a piece of work into tasks for a team of specialists.',
      `Each task has a specialty, one of: ${SPECIALTIES.join(', ')}.`,
      'Reply with JSON only, exactly of this form: {"tasks":[{"title":"<short imperative title>","description":"<what done means>","specialty":"<specialty>"}]} with 1 to 8 tasks.',
    ].join('\n'),
    user: [
      `Workflow: ${i.machineId} (state ${i.state})`,
      typeof i.context.title === 'string' ? `Title: ${i.context.title}` : '',
      typeof i.context.goal === 'string' ? `Goal: ${i.context.goal}` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  };
}

/** The model's tasks (an unknown specialty becomes `general`), or null when the answer does not
 * follow the format. */
export function parseSeededTasks(text: string): SeedTask[] | null {
  const raw = jsonObjectIn(text);
  if (raw === undefined) return null;
  const parsed = seededSchema.safeParse(raw);
  if (!parsed.success) return null;
  return parsed.data.tasks.map((t) => ({
    title: t.title,
    description: t.description?.trim() ?? '',
    specialty: (SPECIALTIES as readonly string[]).includes(t.specialty ?? '')
      ? (t.specialty as Specialty)
      : 'general',
  }));
}

export interface Specialist {
  id: number;
  specialties: string[];
}

/** An NPC profile's `metadata.specialties` (strings only; anything else counts as none). */
export function specialtiesOf(metadata: Record<string, unknown>): string[] {
  const s = metadata.specialties;
  return Array.isArray(s) ? s.filter((x): x is string => typeof x === 'string') : [];
}

/** The NPC whose specialties hold the task's specialty, with the fewest tasks of this instance,
 * then the lowest id; else the assistant's own user. `load` counts each persona's tasks here and
 * is updated by the caller as it assigns. */
export function pickPersona(
  specialty: Specialty,
  specialists: readonly Specialist[],
  load: ReadonlyMap<number, number>,
  assistantId: number,
): number {
  let best: Specialist | undefined;
  for (const s of specialists) {
    if (!s.specialties.includes(specialty)) continue;
    if (
      !best ||
      (load.get(s.id) ?? 0) < (load.get(best.id) ?? 0) ||
      ((load.get(s.id) ?? 0) === (load.get(best.id) ?? 0) && s.id < best.id)
    )
      best = s;
  }
  return best?.id ?? assistantId;
}

export interface TaskPromptInput {
  persona: { name: string; description: string };
  task: { title: string; description: string; specialty: Specialty; notes: string };
  instance: { machineId: string; state: string; context: Record<string, unknown> };
}

/** The user part of a task's call: the persona, the task and the instance's context. */
export function taskPrompt(p: TaskPromptInput): string {
  const { title, goal } = p.instance.context;
  return [
    `You are ${p.persona.name}${p.persona.description ? `, ${p.persona.description}` : ''}, working as the ${p.task.specialty} specialist of a ${p.instance.machineId} workflow (state ${p.instance.state}).`,
    typeof title === 'string' ? `Project: ${title}` : '',
    typeof goal === 'string' ? `Goal: ${goal}` : '',
    `Task: ${p.task.title}`,
    p.task.description ? `Details: ${p.task.description}` : '',
    p.task.notes ? `Notes: ${p.task.notes}` : '',
    'Write the artifact this task asks for, in Markdown. Reply with the artifact only.',
  ]
    .filter(Boolean)
    .join('\n');
}

/** Offline: a fixed Markdown draft marked "Offline draft". */
export function offlineDraft(p: TaskPromptInput): string {
  return [
    `# ${p.task.title}`,
    '',
    '> Offline draft: no model is configured, so this is a placeholder to edit.',
    '',
    `- Specialty: ${p.task.specialty}`,
    `- Persona: ${p.persona.name}`,
    `- Workflow: ${p.instance.machineId} (${p.instance.state})`,
    '',
    p.task.description || 'No description was given.',
    '',
  ].join('\n');
}

/** What a task's finish writes for how its call ended: the task run's status, the task's status,
 * and whether its draft artifact becomes ready (with the call's content). A failed call blocks
 * its task only and leaves the artifact draft. */
export function finishWrites(ok: boolean): {
  taskRun: Extract<TaskRunStatus, 'completed' | 'failed'>;
  task: Extract<TaskStatus, 'completed' | 'blocked'>;
  artifactReady: boolean;
} {
  return ok
    ? { taskRun: 'completed', task: 'completed', artifactReady: true }
    : { taskRun: 'failed', task: 'blocked', artifactReady: false };
}
