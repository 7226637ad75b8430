// The command definitions (the spec's table), how names and arguments are read, and how arguments
// become the REST operation's input.
import { describe, expect, it } from 'vitest';
import {
  argumentPath,
  coerceArgs,
  commandByName,
  COMMANDS,
  operationInput,
  usage,
  type CommandDefinition,
} from './chat-platform.commands.rules.js';

const def = (name: string) => commandByName(name)!;

describe('the command definitions', () => {
  it('are the spec table: nine commands, arguments named and ordered as listed', () => {
    expect(COMMANDS.map((c) => [`/${c.name}`, c.args.map((a) => a.name).join(', ')])).toEqual([
      ['/observer-instance', 'instance_id'],
      ['/observer-transition', 'instance_id, target_state'],
      ['/observer-approve', 'instance_id'],
      ['/observer-evidence', 'instance_id, description, proofUrl'],
      ['/observer-artifacts', 'instance_id'],
      ['/observer-assign', 'task_id, persona_id, status'],
      ['/observer-artifact-view', 'artifact_id'],
      ['/observer-artifact-review', 'artifact_id, approve'],
      ['/observer-orchestrate', 'instance_id'],
    ]);
  });

  it('type their arguments: approve a boolean, persona_id an integer, status optional with choices', () => {
    const types = COMMANDS.flatMap((c) =>
      c.args.map((a) => `${c.name}.${a.name}:${a.type}${a.required ? '' : '?'}`),
    );
    expect(types.filter((x) => !x.endsWith(':string'))).toEqual([
      'observer-assign.persona_id:integer',
      'observer-assign.status:string?',
      'observer-artifact-review.approve:boolean',
    ]);
    expect(def('observer-assign').args[2]!.choices).toEqual([
      'pending',
      'in_progress',
      'completed',
      'blocked',
    ]);
  });

  it('fit a chat platform: descriptions of 1–100 characters', () => {
    for (const c of COMMANDS) {
      expect(c.description.length).toBeGreaterThan(0);
      expect(c.description.length).toBeLessThanOrEqual(100);
      for (const a of c.args) expect(a.description.length).toBeLessThanOrEqual(100);
    }
  });
});

describe('commandByName', () => {
  it.each([
    ['observer-instance', 'observer-instance'],
    ['/observer-instance', 'observer-instance'],
    ['  /Observer-Approve ', 'observer-approve'],
    ['//observer-instance', undefined],
    ['observer', undefined],
    ['', undefined],
    ['/', undefined],
  ])('%j → %s', (input, name) => {
    expect(commandByName(input)?.name).toBe(name);
  });
});

describe('usage', () => {
  it('lists the arguments, optional ones bracketed, choices spelled out', () => {
    expect(usage(def('observer-transition'))).toBe(
      '/observer-transition instance_id:<string> target_state:<string>',
    );
    expect(usage(def('observer-assign'))).toBe(
      '/observer-assign task_id:<string> persona_id:<integer> [status:<pending|in_progress|completed|blocked>]',
    );
    expect(usage(def('observer-artifact-review'))).toBe(
      '/observer-artifact-review artifact_id:<string> approve:<boolean>',
    );
  });
});

describe('coerceArgs', () => {
  const assign = def('observer-assign');
  const review = def('observer-artifact-review');
  const evidence = def('observer-evidence');

  it.each<[CommandDefinition, Record<string, unknown>, Record<string, unknown>]>([
    [assign, { task_id: 't', persona_id: '3' }, { task_id: 't', persona_id: 3 }],
    [assign, { task_id: 't', persona_id: ' +3 ' }, { task_id: 't', persona_id: 3 }],
    [assign, { task_id: 't', persona_id: -2 }, { task_id: 't', persona_id: -2 }],
    [
      assign,
      { task_id: ' t ', persona_id: 3, status: 'blocked' },
      { task_id: 't', persona_id: 3, status: 'blocked' },
    ],
    [assign, { task_id: 't', persona_id: 3, status: '' }, { task_id: 't', persona_id: 3 }],
    [assign, { task_id: 't', persona_id: 3, status: null }, { task_id: 't', persona_id: 3 }],
    [review, { artifact_id: 'a', approve: 'true' }, { artifact_id: 'a', approve: true }],
    [review, { artifact_id: 'a', approve: 'False' }, { artifact_id: 'a', approve: false }],
    [review, { artifact_id: 'a', approve: 'yes' }, { artifact_id: 'a', approve: true }],
    [review, { artifact_id: 'a', approve: '0' }, { artifact_id: 'a', approve: false }],
    [review, { artifact_id: 'a', approve: 1 }, { artifact_id: 'a', approve: true }],
    [review, { artifact_id: 'a', approve: false }, { artifact_id: 'a', approve: false }],
    [review, { artifact_id: 12, approve: true }, { artifact_id: '12', approve: true }],
    [review, { artifact_id: true, approve: true }, { artifact_id: 'true', approve: true }],
    [
      evidence,
      { instance_id: 'i', description: ' Demo\n', proofUrl: 'https://x.example' },
      { instance_id: 'i', description: 'Demo', proofUrl: 'https://x.example' },
    ],
  ])('%#: coerces %j', (d, raw, args) => {
    expect(coerceArgs(d, raw)).toEqual({ ok: true, args });
  });

  it.each<[CommandDefinition, Record<string, unknown>, { path: string; message: string }[]]>([
    [
      assign,
      {},
      [
        { path: 'args.task_id', message: 'required' },
        { path: 'args.persona_id', message: 'required' },
      ],
    ],
    [assign, { task_id: '  ', persona_id: 1 }, [{ path: 'args.task_id', message: 'required' }]],
    [
      assign,
      { task_id: 't', persona_id: '3.5' },
      [{ path: 'args.persona_id', message: 'must be an integer' }],
    ],
    [assign, { task_id: 't', persona_id: 3.5 }, [{ path: 'args.persona_id', message: 'must be an integer' }]],
    [
      assign,
      { task_id: 't', persona_id: '1e3' },
      [{ path: 'args.persona_id', message: 'must be an integer' }],
    ],
    [
      assign,
      { task_id: 't', persona_id: '9999999999999999' },
      [{ path: 'args.persona_id', message: 'must be an integer' }],
    ],
    [
      assign,
      { task_id: 't', persona_id: true },
      [{ path: 'args.persona_id', message: 'must be an integer' }],
    ],
    [
      assign,
      { task_id: 't', persona_id: 1, status: 'done' },
      [{ path: 'args.status', message: 'must be one of pending, in_progress, completed, blocked' }],
    ],
    [
      review,
      { artifact_id: 'a', approve: 'maybe' },
      [{ path: 'args.approve', message: 'must be true or false' }],
    ],
    [review, { artifact_id: 'a', approve: 2 }, [{ path: 'args.approve', message: 'must be true or false' }]],
    [
      review,
      { artifact_id: ['a'], approve: true },
      [{ path: 'args.artifact_id', message: 'must be a string' }],
    ],
    [
      review,
      { artifact_id: 'a', approve: true, notes: 'x' },
      [
        {
          path: 'args.notes',
          message: 'unknown argument; /observer-artifact-review takes artifact_id, approve',
        },
      ],
    ],
    [
      review,
      { artifact_id: 'a', approve: true, proof_url: 'x', constructor: 'y' },
      [
        {
          path: 'args.proof_url',
          message: 'unknown argument; /observer-artifact-review takes artifact_id, approve',
        },
        {
          path: 'args.constructor',
          message: 'unknown argument; /observer-artifact-review takes artifact_id, approve',
        },
      ],
    ],
  ])('%#: refuses %j', (d, raw, errors) => {
    expect(coerceArgs(d, raw)).toEqual({ ok: false, errors });
  });
});

describe('operationInput and argumentPath', () => {
  it('puts each argument where the REST operation takes it', () => {
    expect(
      operationInput(def('observer-assign'), { task_id: 't', persona_id: 3, status: 'blocked' }),
    ).toEqual({ path: { taskId: 't' }, body: { assignedPersonaId: 3, status: 'blocked' } });
    expect(operationInput(def('observer-transition'), { instance_id: 'i', target_state: 'triage' })).toEqual({
      path: { id: 'i' },
      body: { targetState: 'triage' },
    });
    expect(operationInput(def('observer-orchestrate'), { instance_id: 'i' })).toEqual({
      path: { id: 'i' },
      body: {},
    });
  });

  it.each([
    ['observer-transition', 'body', 'targetState', 'args.target_state'],
    ['observer-transition', 'path', 'id', 'args.instance_id'],
    ['observer-assign', 'body', 'assignedPersonaId', 'args.persona_id'],
    ['observer-evidence', 'body', 'proofUrl', 'args.proofUrl'],
    ['observer-evidence', 'body', '(root)', '(root)'],
    ['observer-transition', 'path', 'targetState', 'targetState'],
  ] as const)('%s: %s %s → %s', (name, where, path, expected) => {
    expect(argumentPath(def(name), where, path)).toBe(expected);
  });
});
