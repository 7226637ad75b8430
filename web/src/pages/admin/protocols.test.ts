import { describe, expect, it } from 'vitest';
import type { Schemas } from '../../api/client';
import { definitionOf, protocolBases, protocolOrigin, ruleLines, withScope } from './protocols';

const protocol = (over: Partial<Schemas['Protocol']> = {}) =>
  ({
    id: 'harbour_guide_v1',
    name: 'Harbour guide',
    kind: 'reference',
    base: 'assistant_base_v1',
    template: null,
    description: 'old',
    tone: 'old',
    rules: ['old'],
    tools: [],
    overrides: {},
    capabilities: { memoryAccess: 'standard', adminAccess: false, observer: false },
    workflow: null,
    immutable: false,
    builtin: false,
    ...over,
  }) as unknown as Schemas['Protocol'];

describe('admin protocol rules', () => {
  it('reads rules one a line, blank lines dropped', () => {
    expect(ruleLines(' Be brief. \n\n  Greet newcomers.\n')).toEqual(['Be brief.', 'Greet newcomers.']);
  });

  it('keeps what the editor does not change, by kind', () => {
    const edit = { description: 'new', tone: 'warm', rules: ['a'] };
    expect(definitionOf(protocol(), edit)).toEqual({
      kind: 'reference',
      base: 'assistant_base_v1',
      name: 'Harbour guide',
      description: 'new',
      tone: 'warm',
      rules: ['a'],
      tools: [],
      overrides: {},
      capabilities: { memoryAccess: 'standard', adminAccess: false, observer: false },
    });
    const stringBased = definitionOf(protocol({ kind: 'string', template: 'T', base: null }), edit);
    expect(stringBased).toMatchObject({ kind: 'string', template: 'T' });
    expect(stringBased).not.toHaveProperty('base');
  });

  it('marks ground-floor, built-in and custom protocols', () => {
    expect(protocolOrigin({ immutable: true, builtin: true })).toBe('immutable');
    expect(protocolOrigin({ immutable: false, builtin: true })).toBe('built in');
    expect(protocolOrigin({ immutable: false, builtin: false })).toBe('custom');
  });

  it('bases a new protocol on string-based ones outside the ground floor', () => {
    const list = [
      protocol({ id: 'a', kind: 'string' }),
      protocol({ id: 'b', kind: 'string', immutable: true }),
      protocol({ id: 'c' }),
    ];
    expect(protocolBases(list).map((p) => p.id)).toEqual(['a']);
  });

  it('turns a key’s scope on and off', () => {
    expect(withScope(['sync:read'], 'sync:write', true)).toEqual(['sync:read', 'sync:write']);
    expect(withScope(['sync:read', 'sync:write'], 'sync:read', false)).toEqual(['sync:write']);
  });
});
