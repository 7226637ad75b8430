// The pure workflow rules: both definitions as data, the machine's decisions, auto-advance, the
// exits an instance shows, task moves and the checks a stored definition passes.
import { describe, expect, it } from 'vitest';
import {
  WORKFLOW_DEFINITIONS,
  WORKFLOW_PROTOCOLS,
  type WorkflowDefinition,
} from './workflows.definitions.js';
import {
  allowedTransitions,
  autoAdvance,
  countsRead,
  decideTransition,
  definitionProblems,
  taskMoveAllowed,
  type VisitRecords,
} from './workflows.rules.js';
import { proofUrlSchema } from './workflows.schemas.js';
import type { TaskStatus } from './workflows.tables.js';

const doc = WORKFLOW_DEFINITIONS.find((d) => d.machineId === 'documentation_flow_v1')!;
const triage = WORKFLOW_DEFINITIONS.find((d) => d.machineId === 'triage_flow_v1')!;
const none: VisitRecords = { approvals: 0, evidence: 0 };
const approved: VisitRecords = { approvals: 1, evidence: 0 };
const evidenced: VisitRecords = { approvals: 0, evidence: 2 };

describe('the definitions', () => {
  it('are valid, versioned and name their workflow protocols', () => {
    for (const d of WORKFLOW_DEFINITIONS) expect(definitionProblems(d)).toEqual([]);
    expect(WORKFLOW_DEFINITIONS.map((d) => [d.machineId, d.version, d.protocolId, d.initial])).toEqual([
      ['documentation_flow_v1', 1, 'observer_onboarding_v1', 'intake'],
      ['triage_flow_v1', 1, 'triage_support_v1', 'triage_intake'],
    ]);
    expect(WORKFLOW_PROTOCOLS.map((p) => [p.id, p.workflow.machineId])).toEqual([
      ['observer_onboarding_v1', 'documentation_flow_v1'],
      ['triage_support_v1', 'triage_flow_v1'],
    ]);
  });

  it('carry the contract transitions, checklists and entry actions', () => {
    expect(doc.transitions).toEqual([
      { from: 'intake', to: 'triage', guard: null },
      { from: 'triage', to: 'execution', guard: 'observerApproval' },
      { from: 'execution', to: 'integration', guard: 'testsOrDemoAttached' },
      { from: 'execution', to: 'triage', guard: null },
      { from: 'integration', to: 'completed', guard: 'observerApproval' },
      { from: 'integration', to: 'execution', guard: null },
    ]);
    expect(triage.states.map((s) => [s.name, s.terminal, s.actions])).toEqual([
      ['triage_intake', false, []],
      ['tooling_analysis', false, []],
      ['execution_fix', false, ['announceExecutionStart']],
      ['stabilization', false, ['collectArtifacts']],
      ['completed', true, []],
    ]);
    for (const d of WORKFLOW_DEFINITIONS)
      expect(d.states.map((s) => s.checklist)).toEqual([
        ['Capture the goal', 'Break the work into tasks'],
        ['Review tasks and assignees', "Get the observer's approval"],
        ['Run the tasks', 'Review every artifact', 'Attach tests or a demo'],
        ['Merge approved artifacts', "Get the observer's sign-off"],
        [],
      ]);
  });
});

describe('decideTransition', () => {
  it.each<[string, string, VisitRecords, boolean, unknown]>([
    ['intake', 'triage', none, false, { kind: 'take', to: 'triage', guard: null }],
    ['intake', 'execution', none, false, { kind: 'invalid_transition', allowed: ['triage'] }],
    ['intake', 'intake', none, false, { kind: 'invalid_transition', allowed: ['triage'] }],
    ['intake', 'nowhere', none, false, { kind: 'invalid_transition' }],
    [
      'triage',
      'execution',
      none,
      false,
      { kind: 'guard_not_satisfied', guard: 'observerApproval', missing: ['approval'] },
    ],
    ['triage', 'execution', evidenced, false, { kind: 'guard_not_satisfied', missing: ['approval'] }],
    ['triage', 'execution', approved, false, { kind: 'take', to: 'execution', guard: 'observerApproval' }],
    [
      'execution',
      'integration',
      approved,
      false,
      { kind: 'guard_not_satisfied', guard: 'testsOrDemoAttached', missing: ['evidence'] },
    ],
    ['execution', 'integration', evidenced, false, { kind: 'take', to: 'integration' }],
    ['execution', 'triage', none, false, { kind: 'take', to: 'triage', guard: null }],
    ['integration', 'execution', none, false, { kind: 'take', to: 'execution' }],
    ['integration', 'completed', approved, false, { kind: 'take', to: 'completed' }],
    ['completed', 'intake', approved, false, { kind: 'invalid_transition', allowed: [] }],
    ['integration', 'completed', approved, true, { kind: 'invalid_transition', allowed: [] }],
  ])('%s → %s with %o (archived %s)', (from, to, records, archived, expected) => {
    expect(decideTransition(doc, from, to, records, archived)).toMatchObject(expected as object);
  });

  it('says in its detail what to record', () => {
    const d = decideTransition(triage, 'execution_fix', 'stabilization', none);
    expect(d).toMatchObject({ kind: 'guard_not_satisfied' });
    expect((d as { detail: string }).detail).toMatch(/evidence/);
  });
});

describe('autoAdvance', () => {
  it.each<[WorkflowDefinition, string, VisitRecords, unknown]>([
    [doc, 'intake', approved, null], // an unguarded exit never moves by itself
    [doc, 'triage', none, null],
    [doc, 'triage', approved, { from: 'triage', to: 'execution', guard: 'observerApproval' }],
    [doc, 'execution', approved, null],
    [doc, 'execution', evidenced, { from: 'execution', to: 'integration', guard: 'testsOrDemoAttached' }],
    [
      triage,
      'stabilization',
      approved,
      { from: 'stabilization', to: 'completed', guard: 'observerApproval' },
    ],
    [triage, 'completed', approved, null],
  ])('%#: in %s', (def, state, records, expected) => {
    expect(autoAdvance(def, state, records)).toEqual(expected);
  });
});

describe('allowedTransitions', () => {
  it('lists the forward exit first, with its guard, and none once archived', () => {
    expect(allowedTransitions(doc, 'execution', none, false)).toEqual([
      { to: 'integration', guard: 'testsOrDemoAttached', satisfied: false, missing: ['evidence'] },
      { to: 'triage', guard: null, satisfied: true, missing: [] },
    ]);
    expect(allowedTransitions(doc, 'triage', approved, false)).toEqual([
      { to: 'execution', guard: 'observerApproval', satisfied: true, missing: [] },
    ]);
    expect(allowedTransitions(doc, 'integration', approved, true)).toEqual([]);
    expect(allowedTransitions(doc, 'completed', none, false)).toEqual([]);
  });
});

describe('countsRead', () => {
  it("is the count of the state's guarded exit, none without one or once archived", () => {
    expect(
      ['intake', 'triage', 'execution', 'integration', 'completed'].map((s) => countsRead(doc, s, false)),
    ).toEqual([null, 'approvals', 'evidence', 'approvals', null]);
    expect(countsRead(doc, 'triage', true)).toBeNull();
  });

  it('is all a decision and a view read: the other count changes nothing', () => {
    const other = { approvals: 'evidence', evidence: 'approvals' } as const;
    for (const def of WORKFLOW_DEFINITIONS)
      for (const s of def.states)
        for (const records of [none, approved, evidenced, { approvals: 3, evidence: 1 }]) {
          const kind = countsRead(def, s.name, false);
          const blanked = { ...records };
          if (kind) blanked[other[kind]] = 0;
          else Object.assign(blanked, none);
          expect(allowedTransitions(def, s.name, blanked, false)).toEqual(
            allowedTransitions(def, s.name, records, false),
          );
          expect(autoAdvance(def, s.name, blanked)).toEqual(autoAdvance(def, s.name, records));
          for (const t of def.transitions.filter((x) => x.from === s.name))
            expect(decideTransition(def, s.name, t.to, blanked)).toEqual(
              decideTransition(def, s.name, t.to, records),
            );
        }
  });
});

describe('task moves', () => {
  const all: TaskStatus[] = ['pending', 'in_progress', 'completed', 'blocked'];
  const allowed = new Set([
    'pending>in_progress',
    'pending>blocked',
    'in_progress>completed',
    'in_progress>blocked',
    'in_progress>pending',
    'blocked>pending',
    'blocked>in_progress',
    'completed>in_progress',
  ]);
  for (const from of all)
    for (const to of all)
      it(`${from} → ${to}`, () => {
        expect(taskMoveAllowed(from, to)).toBe(from === to || allowed.has(`${from}>${to}`));
      });
});

describe('definitionProblems', () => {
  const base = doc;
  it.each<[string, WorkflowDefinition, RegExp]>([
    ['an unknown initial', { ...base, initial: 'nope' }, /initial state nope/],
    [
      'two guarded exits',
      {
        ...base,
        transitions: [...base.transitions, { from: 'triage', to: 'intake', guard: 'testsOrDemoAttached' }],
      },
      /more than one guarded exit/,
    ],
    [
      'a terminal exit',
      { ...base, transitions: [...base.transitions, { from: 'completed', to: 'intake', guard: null }] },
      /terminal state completed has exits/,
    ],
    [
      'a dead end',
      { ...base, transitions: base.transitions.filter((t) => t.from !== 'intake') },
      /state intake has no exit/,
    ],
    ['a version that is not the id', { ...base, version: 2 }, /version/],
    [
      'an unknown state',
      { ...base, transitions: [...base.transitions, { from: 'intake', to: 'ghost', guard: null }] },
      /names no state/,
    ],
  ])('refuses %s', (_name, def, problem) => {
    expect(definitionProblems(def).join('\n')).toMatch(problem);
  });
});

describe('proofUrl', () => {
  it.each<[string, boolean]>([
    ['https://ci.example.com/runs/42', true],
    ['http://127.0.0.1:8080/demo', true],
    ['ftp://example.com/file', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
    ['https://' + 'a'.repeat(2049), false],
  ])('%s → %s', (url, ok) => {
    expect(proofUrlSchema.safeParse(url).success).toBe(ok);
  });
});
