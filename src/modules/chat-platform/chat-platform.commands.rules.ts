// The chat-platform commands as data (spec: "Chat-platform commands with the same operations";
// arguments named as the spec lists them), and how a command's name and arguments are read. One
// source for the command endpoint and the Discord slash commands (chat-platform.discord.rules.ts).
// Pure.
import type { FieldProblem } from '../../platform/http/problem.js';
import { TASK_STATUSES } from '../workflows/index.js';

export type ArgType = 'string' | 'integer' | 'boolean';
export type ArgValue = string | number | boolean;
export type CommandArgs = Record<string, ArgValue>;

export interface CommandArg {
  /** As the spec names it (`instance_id`, `proofUrl`). */
  name: string;
  type: ArgType;
  /** At most 100 characters (a slash-command option's limit). */
  description: string;
  required: boolean;
  choices?: readonly string[];
  /** Where the REST operation takes it: a path parameter or a body field, and that field's name. */
  in: 'path' | 'body';
  field: string;
}

export const COMMAND_NAMES = [
  'observer-instance',
  'observer-transition',
  'observer-approve',
  'observer-evidence',
  'observer-artifacts',
  'observer-assign',
  'observer-artifact-view',
  'observer-artifact-review',
  'observer-orchestrate',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export interface CommandDefinition {
  name: CommandName;
  /** At most 100 characters (a slash command's limit). */
  description: string;
  args: readonly CommandArg[];
}

const instanceId: CommandArg = {
  name: 'instance_id',
  type: 'string',
  description: 'The workflow instance id',
  required: true,
  in: 'path',
  field: 'id',
};
const artifactId: CommandArg = {
  name: 'artifact_id',
  type: 'string',
  description: 'The artifact id',
  required: true,
  in: 'path',
  field: 'id',
};

export const COMMANDS: readonly CommandDefinition[] = [
  {
    name: 'observer-instance',
    description: 'Show a workflow instance: its state and the exits it may take next',
    args: [instanceId],
  },
  {
    name: 'observer-transition',
    description: 'Move a workflow instance to another state',
    args: [
      instanceId,
      {
        name: 'target_state',
        type: 'string',
        description: 'The state to move to',
        required: true,
        in: 'body',
        field: 'targetState',
      },
    ],
  },
  {
    name: 'observer-approve',
    description: "Record the observer's approval of the instance's current state",
    args: [instanceId],
  },
  {
    name: 'observer-evidence',
    description: 'Attach evidence (tests or a demo) to the current state',
    args: [
      instanceId,
      {
        name: 'description',
        type: 'string',
        description: 'What the evidence shows',
        required: true,
        in: 'body',
        field: 'description',
      },
      {
        name: 'proofUrl',
        type: 'string',
        description: 'An http(s) link to the proof (never fetched)',
        required: true,
        in: 'body',
        field: 'proofUrl',
      },
    ],
  },
  {
    name: 'observer-artifacts',
    description: "List a workflow instance's artifacts",
    args: [instanceId],
  },
  {
    name: 'observer-assign',
    description: 'Assign a task to a persona, optionally moving its status',
    args: [
      {
        name: 'task_id',
        type: 'string',
        description: 'The task id',
        required: true,
        in: 'path',
        field: 'taskId',
      },
      {
        name: 'persona_id',
        type: 'integer',
        description: "The persona's (character's) user id",
        required: true,
        in: 'body',
        field: 'assignedPersonaId',
      },
      {
        name: 'status',
        type: 'string',
        description: 'The status to move the task to',
        required: false,
        choices: TASK_STATUSES,
        in: 'body',
        field: 'status',
      },
    ],
  },
  {
    name: 'observer-artifact-view',
    description: 'Show an artifact with its content',
    args: [artifactId],
  },
  {
    name: 'observer-artifact-review',
    description: 'Approve or reject a ready artifact',
    args: [
      artifactId,
      {
        name: 'approve',
        type: 'boolean',
        description: 'true to approve, false to reject',
        required: true,
        in: 'body',
        field: 'approve',
      },
    ],
  },
  {
    name: 'observer-orchestrate',
    description: 'Start an orchestrator run: seed, assign and run the tasks',
    args: [instanceId],
  },
];

/** The command a name means: the leading `/` is optional, case and surrounding spaces ignored. */
export function commandByName(input: string): CommandDefinition | undefined {
  const name = input.trim().replace(/^\//, '').toLowerCase();
  return COMMANDS.find((c) => c.name === name);
}

/** `/observer-transition instance_id:<string> target_state:<string> [status:<…>]`. */
export function usage(def: CommandDefinition): string {
  const args = def.args.map((a) => {
    const shape = a.choices ? a.choices.join('|') : a.type;
    return a.required ? `${a.name}:<${shape}>` : `[${a.name}:<${shape}>]`;
  });
  return [`/${def.name}`, ...args].join(' ');
}

const TRUE = new Set(['true', 'yes', 'y', '1', 'on']);
const FALSE = new Set(['false', 'no', 'n', '0', 'off']);

type Coerced = { value: ArgValue } | { error: string };

function coerceOne(arg: CommandArg, raw: string | number | boolean): Coerced {
  switch (arg.type) {
    case 'string':
      return { value: typeof raw === 'string' ? raw.trim() : String(raw) };
    case 'integer': {
      if (typeof raw === 'number')
        return Number.isSafeInteger(raw) ? { value: raw } : { error: 'must be an integer' };
      if (typeof raw === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(raw)) return { value: Number(raw) };
      return { error: 'must be an integer' };
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { value: raw };
      const text = String(raw).trim().toLowerCase();
      if (TRUE.has(text)) return { value: true };
      if (FALSE.has(text)) return { value: false };
      return { error: 'must be true or false' };
    }
  }
}

/**
 * A command's arguments, each coerced to its type ("3" → 3, "true" → true, 3 → "3"); null, absent
 * and blank strings count as not given. Unknown arguments, missing required ones, values that do
 * not fit their type and values outside their choices are refused, each naming `args.<name>`.
 */
export function coerceArgs(
  def: CommandDefinition,
  raw: Readonly<Record<string, unknown>>,
): { ok: true; args: CommandArgs } | { ok: false; errors: FieldProblem[] } {
  const errors: FieldProblem[] = [];
  const args: CommandArgs = {};
  const known = new Set(def.args.map((a) => a.name));
  for (const key of Object.keys(raw))
    if (!known.has(key))
      errors.push({
        path: `args.${key}`,
        message: def.args.length
          ? `unknown argument; /${def.name} takes ${def.args.map((a) => a.name).join(', ')}`
          : `unknown argument; /${def.name} takes none`,
      });
  for (const arg of def.args) {
    const value = Object.hasOwn(raw, arg.name) ? raw[arg.name] : undefined;
    const path = `args.${arg.name}`;
    const blank = value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
    if (blank) {
      if (arg.required) errors.push({ path, message: 'required' });
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      errors.push({ path, message: `must be a ${arg.type}` });
      continue;
    }
    const coerced = coerceOne(arg, value);
    if ('error' in coerced) {
      errors.push({ path, message: coerced.error });
      continue;
    }
    if (arg.choices && !arg.choices.includes(String(coerced.value))) {
      errors.push({ path, message: `must be one of ${arg.choices.join(', ')}` });
      continue;
    }
    args[arg.name] = coerced.value;
  }
  return errors.length ? { ok: false, errors } : { ok: true, args };
}

/** The REST operation's path parameters and body, from coerced arguments. */
export function operationInput(
  def: CommandDefinition,
  args: CommandArgs,
): { path: Record<string, ArgValue>; body: Record<string, ArgValue> } {
  const path: Record<string, ArgValue> = {};
  const body: Record<string, ArgValue> = {};
  for (const arg of def.args)
    if (Object.hasOwn(args, arg.name)) (arg.in === 'path' ? path : body)[arg.field] = args[arg.name]!;
  return { path, body };
}

/** A problem of the REST operation's input (`body.targetState`, `id`) named as the command's
 * argument (`args.target_state`); a path no argument fills stays as it is. */
export function argumentPath(def: CommandDefinition, where: 'path' | 'body', path: string): string {
  const [field, ...rest] = path.split('.');
  const arg = def.args.find((a) => a.in === where && a.field === field);
  return arg ? ['args', arg.name, ...rest].join('.') : path;
}
