// The chat's text: clipping to 2000 characters, each command's answer, refusals and workflow
// notifications.
import { describe, expect, it } from 'vitest';
import { makeProblem } from '../../platform/http/problem.js';
import type { TimelineEvent } from '../timeline/index.js';
import type { Artifact, WorkflowInstance, WorkflowNotice } from '../workflows/index.js';
import {
  clip,
  commandText,
  exitsText,
  instanceText,
  linkAccountText,
  MAX_TEXT,
  notificationText,
  problemText,
  repliesText,
} from './chat-platform.messages.rules.js';

const instance = (over: Partial<WorkflowInstance> = {}): WorkflowInstance => ({
  id: '11111111-1111-4111-8111-111111111111',
  machineId: 'documentation_flow_v1',
  protocolId: 'observer_onboarding_v1',
  state: 'triage',
  context: { title: 'Write the guide' },
  channelId: null,
  guildId: null,
  createdByUserId: 1,
  updatedByUserId: 1,
  version: 2,
  stateVisit: 1,
  stateEnteredAt: '2030-01-01T00:00:00.000Z',
  checklist: ['Review tasks and assignees', "Get the observer's approval"],
  allowedTransitions: [
    { to: 'execution', guard: 'observerApproval', satisfied: false, missing: ['approval'] },
  ],
  registryInstanceId: null,
  activeRunId: null,
  archivedAt: null,
  createdAt: '2030-01-01T00:00:00.000Z',
  ...over,
});

const artifact = (over: Partial<Artifact> = {}): Artifact => ({
  id: '22222222-2222-4222-8222-222222222222',
  instanceId: instance().id,
  taskId: null,
  personaId: null,
  summary: 'The guide',
  status: 'ready',
  reviewStatus: 'pending',
  reviewedByUserId: null,
  reviewNotes: null,
  metadata: {},
  createdAt: '2030-01-01T00:00:00.000Z',
  reviewedAt: null,
  issue: null,
  ...over,
});

describe('clip', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly ten', 11, 'exactly ten'],
    ['one two three four five', 15, 'one two three…'],
    ['line one\nline two three', 20, 'line one\nline two…'],
    ['abcdefghijklmnopqrstuvwxyz', 10, 'abcdefghi…'],
    ['a b', 2, 'a…'],
    ['😀😀😀😀', 3, '😀😀…'],
  ])('%j to %i → %j', (text, max, expected) => {
    expect(clip(text, max)).toBe(expected);
    expect(Array.from(clip(text, max)).length).toBeLessThanOrEqual(max);
  });

  it('keeps every text within 2000 characters by default', () => {
    expect(Array.from(clip('word '.repeat(1000))).length).toBeLessThanOrEqual(MAX_TEXT);
    expect(clip('x'.repeat(2000))).toBe('x'.repeat(2000));
    expect(clip('x'.repeat(2001))).toBe('x'.repeat(1999) + '…');
  });
});

describe('exitsText', () => {
  it.each<[Partial<WorkflowInstance>, string]>([
    [{}, "Next: execution (needs the observer's approval)"],
    [
      {
        allowedTransitions: [
          { to: 'integration', guard: 'testsOrDemoAttached', satisfied: false, missing: ['evidence'] },
          { to: 'triage', guard: null, satisfied: true, missing: [] },
        ],
      },
      'Next: integration (needs evidence (tests or a demo)) · triage',
    ],
    [
      { allowedTransitions: [{ to: 'execution', guard: 'observerApproval', satisfied: true, missing: [] }] },
      'Next: execution (observerApproval: satisfied)',
    ],
    [{ allowedTransitions: [] }, 'No exits from this state.'],
    [
      { allowedTransitions: [], archivedAt: '2030-01-02T00:00:00.000Z' },
      'Completed: no further transitions.',
    ],
  ])('%#', (over, expected) => {
    expect(exitsText(instance(over))).toBe(expected);
  });
});

describe('command answers', () => {
  it('name the instance, its state, checklist, active run and next exits', () => {
    expect(instanceText(instance({ activeRunId: '33333333-3333-4333-8333-333333333333' }))).toBe(
      [
        'Workflow "Write the guide" (documentation_flow_v1) is in **triage** (visit 1, version 2).',
        "Checklist: Review tasks and assignees; Get the observer's approval",
        'Orchestrator run 33333333-3333-4333-8333-333333333333 is active.',
        "Next: execution (needs the observer's approval)",
      ].join('\n'),
    );
    // No title: the id; a title's newlines folded.
    expect(instanceText(instance({ context: {} }))).toMatch(
      /^Workflow 11111111-1111-4111-8111-111111111111 \(/,
    );
    expect(instanceText(instance({ context: { title: 'A\n\nB' } }))).toMatch(/^Workflow "A B" \(/);
  });

  it('say what each command did', () => {
    const i = instance({ state: 'execution', checklist: [], allowedTransitions: [] });
    expect(commandText('observer-transition', i)).toMatch(/^Moved to \*\*execution\*\*\.\nWorkflow/);
    expect(
      commandText('observer-approve', {
        approval: {
          id: 'a',
          instanceId: i.id,
          state: 'triage',
          stateVisit: 1,
          approvedByUserId: 1,
          approvedByName: 'Ada',
          note: null,
          createdAt: '2030-01-01T00:00:00.000Z',
        },
        instance: i,
        advanced: { from: 'triage', to: 'execution', guard: 'observerApproval' },
      }),
    ).toMatch(
      /^Approval recorded for triage by Ada\.\nAdvanced automatically: triage → execution \(observerApproval\)\.\n/,
    );
    expect(commandText('observer-artifacts', { artifacts: [] })).toBe('No artifacts yet.');
    expect(
      commandText('observer-artifacts', { artifacts: [artifact(), artifact({ id: 'b', summary: '' })] }),
    ).toBe(
      `2 artifact(s):\n- The guide [ready, pending] (${artifact().id})\n- (no summary) [ready, pending] (b)`,
    );
    expect(
      commandText('observer-orchestrate', {
        id: 'r',
        instanceId: i.id,
        status: 'queued',
        trigger: 'command',
        taskIds: [],
        progress: { total: 0, completed: 0, failed: 0 },
        error: null,
        createdAt: '2030-01-01T00:00:00.000Z',
        finishedAt: null,
      }),
    ).toBe('Orchestrator run r is queued (trigger command; tasks 0/0 done, 0 failed).');
  });

  it('show an artifact with as much of its content as fits', () => {
    expect(commandText('observer-artifact-view', artifact({ content: '# Guide', reviewNotes: 'ok' }))).toBe(
      `Artifact ${artifact().id} [ready, pending]: The guide\nReview notes: ok\n\n# Guide`,
    );
    const long = commandText('observer-artifact-view', artifact({ content: 'word '.repeat(2000) }));
    expect(Array.from(long).length).toBeLessThanOrEqual(MAX_TEXT);
    expect(long).toMatch(/^Artifact .*\n\nword word/);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('problemText', () => {
  it('gives the detail, the fields at fault, what is allowed and the usage', () => {
    expect(
      problemText(
        makeProblem('validation_failed', 'The arguments of /observer-transition are not valid', {
          errors: [{ path: 'args.target_state', message: 'required' }],
        }),
        '/observer-transition instance_id:<string> target_state:<string>',
      ),
    ).toBe(
      [
        'Validation failed: The arguments of /observer-transition are not valid',
        '- args.target_state: required',
        'Usage: /observer-transition instance_id:<string> target_state:<string>',
      ].join('\n'),
    );
    expect(
      problemText(
        makeProblem('invalid_transition', 'no such exit', { from: 'a', to: 'b', allowed: ['c', 'd'] }),
      ),
    ).toBe('Invalid transition: no such exit\nAllowed: c, d');
    expect(problemText(makeProblem('invalid_transition', 'done', { allowed: [] }))).toBe(
      'Invalid transition: done\nNo move is allowed.',
    );
    expect(problemText(makeProblem('not_found', 'No such workflow instance'))).toBe(
      'Not found: No such workflow instance',
    );
  });

  it('lists at most ten fields and stays within 2000 characters', () => {
    const errors = Array.from({ length: 12 }, (_, k) => ({ path: `args.a${k}`, message: 'x'.repeat(500) }));
    const text = problemText(makeProblem('validation_failed', 'd'.repeat(5000), { errors }));
    expect(text.split('\n').filter((l) => l.startsWith('- args.')).length).toBeLessThanOrEqual(10);
    expect(Array.from(text).length).toBeLessThanOrEqual(MAX_TEXT);
  });
});

describe('notificationText', () => {
  const notice = (eventType: string, metadata: Record<string, unknown>, eventText = ''): WorkflowNotice => ({
    channelId: '123456789012345678',
    guildId: null,
    instanceId: 'i-1',
    machineId: 'documentation_flow_v1',
    title: 'Guide',
    event: {
      id: 1,
      userId: 1,
      eventType,
      eventText,
      source: 'state_machine',
      instanceId: null,
      observerId: 1,
      personaId: null,
      metadata: { stateMachineInstanceId: 'i-1', machineId: 'documentation_flow_v1', ...metadata },
      occurredAt: '2030-01-01T00:00:00.000Z',
      timelineAt: '2030-01-01T00:00:00.000Z',
    } satisfies TimelineEvent,
  });

  it.each<[string, Record<string, unknown>, string, string | null]>([
    [
      'workflow_instance_created',
      { state: 'intake' },
      '',
      '[documentation_flow_v1] "Guide": created in **intake** (i-1).',
    ],
    [
      'workflow_transition',
      { from: 'intake', to: 'triage', auto: false },
      '',
      '[documentation_flow_v1] "Guide": intake → **triage**.',
    ],
    [
      'workflow_transition',
      { from: 'triage', to: 'execution', auto: true },
      '',
      '[documentation_flow_v1] "Guide": triage → **execution** (automatic).',
    ],
    [
      'workflow_approval',
      { state: 'triage' },
      'Ada approved triage',
      '[documentation_flow_v1] "Guide": Ada approved triage.',
    ],
    [
      'verification_evidence',
      { state: 'integration', proofUrl: 'https://demo.example/' },
      'The demo',
      '[documentation_flow_v1] "Guide": evidence for integration: The demo <https://demo.example/>',
    ],
    [
      'workflow_execution_started',
      { state: 'execution', runId: 'r-1' },
      '',
      '[documentation_flow_v1] "Guide": execution starts in **execution** (orchestrator run r-1).',
    ],
    [
      'workflow_execution_started',
      { state: 'execution', runId: null },
      '',
      '[documentation_flow_v1] "Guide": execution starts in **execution**.',
    ],
    [
      'workflow_artifacts_collected',
      { state: 'integration', artifacts: [{ id: 'a-1', summary: 'The guide', reviewStatus: 'approved' }] },
      '',
      '[documentation_flow_v1] "Guide": 1 artifact(s) collected in **integration**:\n- The guide [approved] (a-1)',
    ],
    [
      'workflow_completed',
      { state: 'completed' },
      '',
      '[documentation_flow_v1] "Guide": completed and archived.',
    ],
    [
      'workflow_run_finished',
      { status: 'completed' },
      'Orchestrator run completed: 3 of 3 task(s) completed, 0 failed',
      '[documentation_flow_v1] "Guide": Orchestrator run completed: 3 of 3 task(s) completed, 0 failed.',
    ],
    ['workflow_checklist', { items: ['a'] }, 'Checklist', null],
    ['workflow_task_updated', {}, 'x', null],
    ['workflow_task_completed', {}, 'x', null],
    ['something_else', {}, 'x', null],
  ])('%s %j', (type, metadata, text, expected) => {
    expect(notificationText(notice(type, metadata, text))).toBe(expected);
  });

  it('names an untitled instance by its id, and stays within 2000 characters', () => {
    expect(notificationText({ ...notice('workflow_completed', {}), title: null })).toBe(
      '[documentation_flow_v1] i-1: completed and archived.',
    );
    const many = Array.from({ length: 100 }, (_, k) => ({
      id: `a-${k}`,
      summary: 's'.repeat(100),
      reviewStatus: 'pending',
    }));
    const text = notificationText(
      notice('workflow_artifacts_collected', { state: 'integration', artifacts: many }),
    )!;
    expect(Array.from(text).length).toBeLessThanOrEqual(MAX_TEXT);
    expect(text.endsWith('…')).toBe(true);
  });
});

describe('chat replies', () => {
  it('are the text alone for one speaker, each under its name for several, clipped', () => {
    expect(repliesText([{ npcName: 'Assistant', text: 'Hello!' }])).toBe('Hello!');
    expect(
      repliesText([
        { npcName: 'Mira', text: 'Mind the sparks.' },
        { npcName: 'Tom\nthe smith', text: 'Welcome.' },
      ]),
    ).toBe('**Mira**: Mind the sparks.\n\n**Tom the smith**: Welcome.');
    const long = repliesText([{ npcName: 'Assistant', text: 'word '.repeat(1000) }]);
    expect(Array.from(long).length).toBeLessThanOrEqual(MAX_TEXT);
    expect(long.endsWith('…')).toBe(true);
  });

  it('ask an unlinked platform user to link their account, naming their id', () => {
    expect(linkAccountText('400000000000000009')).toMatch(
      /^Link your account first: .*chat-platform user 400000000000000009/,
    );
  });
});
