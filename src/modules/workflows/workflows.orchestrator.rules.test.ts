// The orchestrator's pure rules: seeded tasks from the context or the model's answer, the fixed
// tasks, the persona a task gets, and what a task's finish writes.
import { describe, expect, it } from 'vitest';
import {
  contextTasks,
  finishWrites,
  fixedTasks,
  parseSeededTasks,
  pickPersona,
  specialtiesOf,
  type Specialist,
} from './workflows.orchestrator.rules.js';

describe('seeding', () => {
  it.each([
    ['no tasks', {}, null],
    ['empty list', { tasks: [] }, null],
    ['not a list', { tasks: 'x' }, null],
    ['defaults', { tasks: [{ title: 'A' }] }, [{ title: 'A', description: '', specialty: 'general' }]],
    [
      'kept',
      { tasks: [{ title: 'B', description: 'd', specialty: 'docs' }] },
      [{ title: 'B', description: 'd', specialty: 'docs' }],
    ],
  ])('context.tasks: %s', (_name, context, expected) => {
    expect(contextTasks(context)).toEqual(expected);
  });

  it.each([
    ['plain JSON', '{"tasks":[{"title":"A","specialty":"code"}]}', [['A', 'code']]],
    ['JSON inside prose', 'Sure! {"tasks":[{"title":"A","specialty":"tests"}]} Done.', [['A', 'tests']]],
    ['unknown specialty', '{"tasks":[{"title":"A","specialty":"magic"}]}', [['A', 'general']]],
    ['no JSON', 'I cannot help', null],
    ['bad JSON', '{"tasks":[', null],
    ['no tasks', '{"tasks":[]}', null],
    ['over 8', JSON.stringify({ tasks: Array.from({ length: 9 }, (_, i) => ({ title: `t${i}` })) }), null],
  ])('the model answer: %s', (_name, text, expected) => {
    const got = parseSeededTasks(text);
    expect(got && got.map((t) => [t.title, t.specialty])).toEqual(expected);
  });

  it('has three fixed tasks per flow: docs, code, tests', () => {
    for (const m of ['documentation_flow_v1', 'triage_flow_v1', 'unknown_v1'])
      expect(fixedTasks(m).map((t) => t.specialty)).toEqual(['docs', 'code', 'tests']);
  });
});

describe('assignment', () => {
  const team: Specialist[] = [
    { id: 7, specialties: ['code', 'tests'] },
    { id: 3, specialties: ['code'] },
    { id: 9, specialties: ['docs'] },
  ];
  it.each([
    ['the only docs specialist', 'docs', {}, 9],
    ['lowest id on a tie', 'code', {}, 3],
    ['fewest tasks here first', 'code', { 3: 2, 7: 1 }, 7],
    ['tie on load: lowest id', 'code', { 3: 1, 7: 1 }, 3],
    ['nobody: the assistant', 'design', {}, 1],
  ] as const)('%s', (_name, specialty, load, expected) => {
    const map = new Map(Object.entries(load).map(([k, v]) => [Number(k), v]));
    expect(pickPersona(specialty, team, map, 1)).toBe(expected);
  });

  it('reads metadata.specialties as strings only', () => {
    expect(specialtiesOf({ specialties: ['code', 3, 'docs'] })).toEqual(['code', 'docs']);
    expect(specialtiesOf({ specialties: 'code' })).toEqual([]);
    expect(specialtiesOf({})).toEqual([]);
  });
});

describe('a finish', () => {
  it('completes the task and readies its artifact; a failed call blocks the task, artifact draft', () => {
    expect(finishWrites(true)).toEqual({ taskRun: 'completed', task: 'completed', artifactReady: true });
    expect(finishWrites(false)).toEqual({ taskRun: 'failed', task: 'blocked', artifactReady: false });
  });
});
