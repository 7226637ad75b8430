import { describe, expect, it } from 'vitest';
import { isPersona, personaTypeOf, sessionTitle, type Persona } from './persona.rules.js';

describe('persona rules', () => {
  it.each<[Persona, string]>([
    ['Observer', 'observer'],
    ['Sister', 'sister'],
    ['Worker', 'coder'],
  ])('%s routes with the persona type %s', (persona, type) => {
    expect(personaTypeOf(persona)).toBe(type);
  });

  it.each([
    ['Observer', true],
    ['Sister', true],
    ['Worker', true],
    ['observer', false],
    ['Coder', false],
    ['', false],
  ])('isPersona(%j) is %s', (value, expected) => {
    expect(isPersona(value)).toBe(expected);
  });

  it('titles the conversation with the persona and the observer, at most 200 characters', () => {
    expect(sessionTitle('Sister', 'Observer')).toBe('Sister · Observer');
    expect(sessionTitle('Worker', 'x'.repeat(300))).toHaveLength(200);
  });
});
