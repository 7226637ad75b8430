// Pure rules of the workflows: the XState machine a definition runs as, what a transition request
// meets (no such exit, an unmet guard, or the move), auto-advance, the exits an instance shows,
// task moves, and the checks a stored definition passes. No I/O: the service loads the approvals
// and evidence of the current state visit, then asks these.
import { getNextSnapshot, setup, type AnyStateMachine } from 'xstate';
import type { GuardName, TransitionDefinition, WorkflowDefinition } from './workflows.definitions.js';
import { GUARDS } from './workflows.definitions.js';
import { TASK_MOVES, type TaskStatus } from './workflows.tables.js';

/** What a guard counts: the approvals and evidence recorded in the current visit of the state. */
export interface VisitRecords {
  approvals: number;
  evidence: number;
}

/** A guard: the kind of visit record it counts (it holds once the visit has one), and what a
 * refusal says is missing (the 409's `missing`) and how to record it (its `detail`). */
export interface GuardRule {
  counts: keyof VisitRecords;
  missing: string;
  detail: string;
}

/** Every guard, once: the machine's guard bodies, the instance's `allowedTransitions`, the
 * refusals and which count a state's view reads all come from here. `satisfies` makes a guard
 * named in GUARDS and missing here a compile error. */
export const GUARD_RULES = {
  observerApproval: {
    counts: 'approvals',
    missing: 'approval',
    detail:
      'record an approval (POST …/approvals by an admin or the owner of the observer) in this state first',
  },
  testsOrDemoAttached: {
    counts: 'evidence',
    missing: 'evidence',
    detail:
      'record evidence (POST …/evidence with a description and a proofUrl of tests or a demo) in this state first',
  },
} as const satisfies Record<GuardName, GuardRule>;

/** Whether a guard holds over a visit's records (the machine's guard body). */
export const guardHolds = (guard: GuardName, records: VisitRecords): boolean =>
  records[GUARD_RULES[guard].counts] > 0;

const eventOf = (to: string) => ({ type: `to.${to}` });

type GuardBody = (args: { context: VisitRecords }) => boolean;

function guardBodies(): Record<GuardName, GuardBody> {
  const bodies = {} as Record<GuardName, GuardBody>;
  for (const guard of GUARDS) bodies[guard] = ({ context }) => guardHolds(guard, context);
  return bodies;
}

/** The definition as an XState machine: one event per exit (`to.<state>`), guards over the visit's
 * records (synchronous, as XState's are), the terminal state final. */
export function buildMachine(def: WorkflowDefinition): AnyStateMachine {
  const states: Record<
    string,
    { type?: 'final'; on?: Record<string, { target: string; guard?: GuardName }> }
  > = {};
  for (const s of def.states) states[s.name] = s.terminal ? { type: 'final' } : { on: {} };
  for (const t of def.transitions)
    states[t.from]!.on![eventOf(t.to).type] = t.guard ? { target: t.to, guard: t.guard } : { target: t.to };
  return setup({
    types: { context: {} as VisitRecords, events: {} as { type: string } },
    guards: guardBodies(),
  }).createMachine({
    id: def.machineId,
    initial: def.initial,
    context: { approvals: 0, evidence: 0 },
    states,
  });
}

const machines = new Map<string, AnyStateMachine>();
/** Definitions never change under an id, so each machine is built once per process. */
export function machineOf(def: WorkflowDefinition): AnyStateMachine {
  let m = machines.get(def.machineId);
  if (!m) machines.set(def.machineId, (m = buildMachine(def)));
  return m;
}

/** The machine at a state with a visit's records: the one evaluator of exits, which the
 * decisions (decideTransition, autoAdvance) and the view (allowedTransitions) all ask. */
function machineAt(def: WorkflowDefinition, state: string, records: VisitRecords) {
  const machine = machineOf(def);
  const snapshot = machine.resolveState({ value: state, context: records });
  return {
    takes: (to: string) => snapshot.can(eventOf(to)),
    next: (to: string) => String(getNextSnapshot(machine, snapshot, eventOf(to)).value),
  };
}

/** The count a guard reads. */
export const guardCounts = (guard: GuardName): keyof VisitRecords => GUARD_RULES[guard].counts;

/** The one count of a state's visit records its decisions and its view read: its guarded exit's
 * (a state has at most one; allowedTransitions, autoAdvance and decideTransition consult no
 * other), none for a state without one or an archived instance. */
export function countsRead(
  def: WorkflowDefinition,
  state: string,
  archived: boolean,
): keyof VisitRecords | null {
  if (archived) return null;
  const guard = exitsOf(def, state).find((t) => t.guard !== null)?.guard;
  return guard ? guardCounts(guard) : null;
}

export const exitsOf = (def: WorkflowDefinition, state: string): TransitionDefinition[] =>
  def.transitions.filter((t) => t.from === state);

export const stateOf = (def: WorkflowDefinition, state: string) => def.states.find((s) => s.name === state);

export type TransitionDecision =
  | { kind: 'take'; from: string; to: string; guard: GuardName | null }
  | { kind: 'invalid_transition'; from: string; to: string; allowed: string[] }
  | {
      kind: 'guard_not_satisfied';
      from: string;
      to: string;
      guard: GuardName;
      missing: string[];
      detail: string;
    };

/** A transition request: no such exit (unknown target, the current state, terminal or archived
 * instance) → invalid_transition; an exit whose guard the machine does not pass → guard_not_satisfied;
 * else the move the machine takes. */
export function decideTransition(
  def: WorkflowDefinition,
  state: string,
  target: string,
  records: VisitRecords,
  archived = false,
): TransitionDecision {
  const exits = archived ? [] : exitsOf(def, state);
  const exit = exits.find((t) => t.to === target);
  if (!exit) return { kind: 'invalid_transition', from: state, to: target, allowed: exits.map((t) => t.to) };
  const machine = machineAt(def, state, records);
  if (machine.takes(target))
    return { kind: 'take', from: state, to: machine.next(target), guard: exit.guard };
  const guard = exit.guard!;
  return {
    kind: 'guard_not_satisfied',
    from: state,
    to: target,
    guard,
    missing: [GUARD_RULES[guard].missing],
    detail: `The transition ${state} → ${target} needs ${guard}: ${GUARD_RULES[guard].detail}`,
  };
}

/** After an approval or evidence: the state's guarded exit when the machine now takes it (one
 * hop; unguarded exits never move by themselves). */
export function autoAdvance(
  def: WorkflowDefinition,
  state: string,
  records: VisitRecords,
): { from: string; to: string; guard: GuardName } | null {
  const guarded = exitsOf(def, state).find((t) => t.guard !== null);
  if (!guarded) return null;
  const d = decideTransition(def, state, guarded.to, records);
  return d.kind === 'take' ? { from: state, to: d.to, guard: guarded.guard! } : null;
}

export interface AllowedTransition {
  to: string;
  guard: GuardName | null;
  satisfied: boolean;
  missing: string[];
}

/** The instance's `allowedTransitions`: its state's exits (none once archived), forward first. */
export function allowedTransitions(
  def: WorkflowDefinition,
  state: string,
  records: VisitRecords,
  archived: boolean,
): AllowedTransition[] {
  const exits = archived ? [] : exitsOf(def, state);
  if (exits.length === 0) return [];
  const machine = machineAt(def, state, records);
  return exits.map((t) => {
    const satisfied = machine.takes(t.to);
    return {
      to: t.to,
      guard: t.guard,
      satisfied,
      missing: satisfied || t.guard === null ? [] : [GUARD_RULES[t.guard].missing],
    };
  });
}

export const taskMoveAllowed = (from: TaskStatus, to: TaskStatus): boolean =>
  from === to || TASK_MOVES[from].includes(to);

/** What a stored definition must satisfy; [] when it does. */
export function definitionProblems(def: WorkflowDefinition): string[] {
  const problems: string[] = [];
  const names = new Set(def.states.map((s) => s.name));
  if (names.size !== def.states.length) problems.push('state names repeat');
  if (!names.has(def.initial)) problems.push(`the initial state ${def.initial} is not a state`);
  if (!/_v[1-9][0-9]*$/.test(def.machineId) || !def.machineId.endsWith(`_v${def.version}`))
    problems.push('the machine id must end in its version (_v<version>)');
  for (const t of def.transitions) {
    if (!names.has(t.from) || !names.has(t.to))
      problems.push(`transition ${t.from} → ${t.to} names no state`);
    if (t.from === t.to) problems.push(`transition ${t.from} → ${t.to} goes nowhere`);
    if (t.guard !== null && !GUARDS.includes(t.guard)) problems.push(`unknown guard ${String(t.guard)}`);
  }
  for (const s of def.states) {
    const exits = exitsOf(def, s.name);
    if (s.terminal && exits.length > 0) problems.push(`terminal state ${s.name} has exits`);
    if (!s.terminal && exits.length === 0) problems.push(`state ${s.name} has no exit`);
    if (exits.filter((t) => t.guard !== null).length > 1)
      problems.push(`state ${s.name} has more than one guarded exit`);
    if (new Set(exits.map((t) => t.to)).size !== exits.length)
      problems.push(`state ${s.name} repeats an exit`);
  }
  return problems;
}
