import { describe, expect, it } from 'vitest';
import type { Schemas } from '../../api/client';
import { boardStates, instanceLabel, withArtifact } from './board';

const instance = (state: string, context: Record<string, unknown> = {}) =>
  ({
    id: '0123456789abcdef',
    machineId: 'documentation_flow_v1',
    state,
    context,
  }) as Schemas['WorkflowInstance'];

describe('the workflows board', () => {
  it('has the definition’s states as columns, else the states instances are in', () => {
    const def = { states: [{ name: 'intake' }, { name: 'triage' }] } as Schemas['WorkflowDefinition'];
    expect(boardStates(def, [instance('done')])).toEqual(['intake', 'triage']);
    expect(boardStates(undefined, [instance('b'), instance('a'), instance('b')])).toEqual(['b', 'a']);
  });

  it('names an instance by its title, else its definition, with the start of its id', () => {
    expect(instanceLabel(instance('intake', { title: 'Harbour guide' }))).toBe('Harbour guide · 01234567');
    expect(instanceLabel(instance('intake', { title: 3 }))).toBe('documentation_flow_v1 · 01234567');
  });

  it('changes one artifact, leaving the others', () => {
    const list = [
      { id: 'a', reviewStatus: 'pending' },
      { id: 'b', reviewStatus: 'pending' },
    ] as Schemas['WorkflowArtifact'][];
    expect(withArtifact(list, { id: 'b', reviewStatus: 'approved' }).map((a) => a.reviewStatus)).toEqual([
      'pending',
      'approved',
    ]);
  });
});
