// The contract's trigger table as pure rules: from what a context means (an instance and its
// tasks and artifacts, a protocol without an instance, or an intent), the suggestions whose
// trigger holds, each with its key, priority, message and actions (every one also offers CANCEL).
// A key is type + target + the instance's state visit: once a suggestion was declined, cleared,
// executed or undone, the pass does not make its key again until the instance moves on.
import type { GuardName, Task } from '../workflows/index.js';
import { DEFAULT_CONFIDENCE, type ActionType, type SuggestionType } from './suggestions.rules.js';

export const PRIORITY: Record<Exclude<SuggestionType, 'NONE'>, number> = {
  APPROVE_GUARD: 90,
  ATTACH_EVIDENCE: 85,
  BREAK_DOWN_TASKS: 80,
  REVIEW_ARTIFACT: 75,
  RUN_ORCHESTRATOR: 70,
  TRANSITION_STATE: 60,
  GENERATE_DOCUMENTATION: 50,
  CREATE_STATE_MACHINE: 50,
  SELECT_PROTOCOL: 40,
  VIEW_ARTIFACTS: 30,
  SUGGEST_NEXT_STEP: 20,
};

/** An action as stored: its safety and autoExecutable flag follow from its type and the config. */
export interface StoredAction {
  type: ActionType;
  label: string;
  params: Record<string, unknown>;
}

export interface Candidate {
  type: Exclude<SuggestionType, 'NONE'>;
  key: string;
  priority: number;
  confidence: number;
  message: string;
  actions: StoredAction[];
  metadata: Record<string, unknown>;
}

/** What the pass knows of an instance (workflows' overview, narrowed). */
export interface InstanceFacts {
  id: string;
  machineId: string;
  state: string;
  stateVisit: number;
  initial: string;
  archived: boolean;
  /** The state's forward exit (its first), or null (terminal, archived). */
  forward: { to: string; guard: GuardName | null; satisfied: boolean } | null;
  /** Whether the caller may approve (an admin or the owner of the instance's observer). */
  approver: boolean;
  tasks: { id: string; status: Task['status'] }[];
  artifacts: { id: string; status: 'draft' | 'ready'; reviewStatus: string; summary: string }[];
  activeRunId: string | null;
}

export const CANCEL_ACTION: StoredAction = { type: 'CANCEL', label: 'Dismiss', params: {} };

/** The task GENERATE_DOCUMENTATION adds before it starts a run. */
export const DOCS_TASK = {
  title: 'Write the documentation',
  description: 'Document what this workflow built, from its approved artifacts.',
  specialty: 'docs' as const,
};

/** The scope part of a key: the instance and its state visit (a context without one: `-`). */
export const scopeOf = (instanceId: string | null, stateVisit: number | null) =>
  instanceId === null ? '-' : `${instanceId}@${stateVisit ?? 0}`;

export const keyOf = (type: SuggestionType, target: string, scope: string) => `${type}|${target}|${scope}`;

function candidate(
  type: Candidate['type'],
  target: string,
  scope: string,
  message: string,
  actions: StoredAction[],
  metadata: Record<string, unknown> = {},
  confidence = DEFAULT_CONFIDENCE,
): Candidate {
  return {
    type,
    key: keyOf(type, target, scope),
    priority: PRIORITY[type],
    confidence,
    message,
    actions: [...actions, CANCEL_ACTION],
    metadata: { source: 'trigger', ...metadata },
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** With a state machine: the instance's state, tasks, artifacts and run drive the suggestions. */
export function instanceCandidates(f: InstanceFacts): Candidate[] {
  const scope = scopeOf(f.id, f.stateVisit);
  const out: Candidate[] = [];
  const fwd = f.archived ? null : f.forward;
  if (fwd && fwd.guard === 'observerApproval' && !fwd.satisfied && f.approver)
    out.push(
      candidate(
        'APPROVE_GUARD',
        fwd.to,
        scope,
        `Approve ${f.state} so the workflow can move on to ${fwd.to}`,
        [{ type: 'APPROVE', label: 'Approve', params: {} }],
        { guard: fwd.guard, targetState: fwd.to },
      ),
    );
  if (fwd && fwd.guard === 'testsOrDemoAttached' && !fwd.satisfied)
    out.push(
      candidate(
        'ATTACH_EVIDENCE',
        fwd.to,
        scope,
        `Attach tests or a demo as evidence to move from ${f.state} to ${fwd.to}`,
        [{ type: 'ATTACH_EVIDENCE', label: 'Attach evidence', params: {} }],
        { guard: fwd.guard, targetState: fwd.to, needs: ['description', 'proofUrl'] },
      ),
    );
  if (!f.archived && f.state === f.initial && f.tasks.length === 0)
    out.push(
      candidate(
        'BREAK_DOWN_TASKS',
        f.state,
        scope,
        'Break the work into tasks: the orchestrator seeds them and assigns a persona to each',
        [{ type: 'EXECUTE', label: 'Break down tasks', params: { runTasks: false } }],
      ),
    );
  if (!f.archived)
    for (const a of f.artifacts)
      if (a.status === 'ready' && a.reviewStatus === 'pending')
        out.push(
          candidate(
            'REVIEW_ARTIFACT',
            a.id,
            scope,
            `Review the artifact "${a.summary || a.id}"`,
            [{ type: 'REVIEW', label: 'Review', params: { artifactId: a.id } }],
            { artifactId: a.id, needs: ['approve'] },
          ),
        );
  const pending = f.tasks.filter((t) => t.status === 'pending').map((t) => t.id);
  if (!f.archived && pending.length > 0 && f.activeRunId === null)
    out.push(
      candidate(
        'RUN_ORCHESTRATOR',
        [...pending].sort().join(','),
        scope,
        `Run the orchestrator on ${plural(pending.length, 'pending task')}`,
        [{ type: 'EXECUTE', label: 'Run the orchestrator', params: { runTasks: true } }],
        { taskIds: pending },
      ),
    );
  if (fwd && (fwd.guard === null || fwd.satisfied))
    out.push(
      candidate(
        'TRANSITION_STATE',
        fwd.to,
        scope,
        `Move the workflow from ${f.state} to ${fwd.to}`,
        [{ type: 'TRANSITION', label: `Move to ${fwd.to}`, params: { targetState: fwd.to } }],
        { from: f.state, targetState: fwd.to },
      ),
    );
  if (!f.archived && f.machineId.startsWith('documentation_flow_') && f.state === 'integration')
    out.push(
      candidate(
        'GENERATE_DOCUMENTATION',
        f.state,
        scope,
        'Generate the documentation: a docs task, run by the orchestrator',
        [{ type: 'EXECUTE', label: 'Generate documentation', params: {} }],
      ),
    );
  if (f.artifacts.length > 0)
    out.push(
      candidate(
        'VIEW_ARTIFACTS',
        '',
        scope,
        `View the ${plural(f.artifacts.length, 'artifact')} of this workflow`,
        [{ type: 'VIEW', label: 'View artifacts', params: {} }],
        { artifacts: f.artifacts.length },
      ),
    );
  return out;
}

/** With a protocol and no instance: start that protocol's workflow here. `previousInstanceId`
 * (an instance bound before, now completed) is part of the key, so a new one can be suggested. */
export function protocolCandidates(p: {
  protocolId: string;
  machineId: string;
  previousInstanceId: string | null;
}): Candidate[] {
  return [
    candidate(
      'CREATE_STATE_MACHINE',
      `${p.machineId}:${p.previousInstanceId ?? '-'}`,
      scopeOf(null, null),
      `Start a ${p.machineId} workflow here`,
      [{ type: 'EXECUTE', label: 'Create the workflow', params: { machineId: p.machineId } }],
      { protocolId: p.protocolId, machineId: p.machineId },
    ),
  ];
}

export type Intent = 'none' | 'development' | 'bug';

/** With neither: a protocol selection when the intent is development or a bug. */
export function intentCandidates(i: {
  intent: Intent;
  confidence: number;
  protocolId: string | null;
}): Candidate[] {
  if (i.intent === 'none' || i.protocolId === null) return [];
  return [
    candidate(
      'SELECT_PROTOCOL',
      i.protocolId,
      scopeOf(null, null),
      i.intent === 'bug'
        ? `This looks like a bug to fix: work on it with the ${i.protocolId} protocol`
        : `This looks like development work: run it with the ${i.protocolId} protocol`,
      [
        { type: 'EXECUTE', label: 'Use this protocol', params: { protocolId: i.protocolId } },
        { type: 'ASK_QUESTIONS', label: 'Ask me first', params: { protocolId: i.protocolId } },
      ],
      { intent: i.intent, protocolId: i.protocolId, source: 'intent' },
      i.confidence,
    ),
  ];
}

/** A follow-up when the pass after an execution made nothing new: where the instance stands. */
export function nextStepCandidate(f: { instanceId: string; stateVisit: number; after: string }): Candidate {
  return {
    ...candidate(
      'SUGGEST_NEXT_STEP',
      f.after,
      scopeOf(f.instanceId, f.stateVisit),
      'See where the workflow stands and what comes next',
      [{ type: 'SHOW_STATUS', label: 'Show status', params: {} }],
    ),
    metadata: { source: 'follow_up', followUpOf: f.after },
  };
}
