// The pure protocol rules: the spec's routing table and order, every edge, definition checks;
// composition and merge are in protocols.compose.test.ts.
import { describe, expect, it } from 'vitest';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';
import {
  categoryOf,
  definitionProblems,
  parseProtocolId,
  routeProtocol,
  type RoutingInput,
} from './protocols.rules.js';
import { base, def, seedDef } from './protocols.fixtures.js';
import { protocolDefinitionSchema } from './protocols.schemas.js';
import { BASE_TEMPLATE_ID, SEED_PROTOCOLS } from './protocols.seeds.js';

type Expected = { category?: string; channel?: string; step: number; enforced: boolean };

describe('routeProtocol: the spec table', () => {
  const table: [Role, AccountType, string, boolean][] = [
    ['carbon', 'core_primary', 'PRIVATE', true],
    ['silicon', 'developer', 'TECH', false],
    ['silicon', 'npc', 'NEUTRAL', false],
    ['cso', 'public', 'SYSTEM', false],
    ['carbon', 'public', 'PUBLIC', false],
  ];
  it.each(table)('%s + %s → %s (enforced %s)', (role, accountType, category, enforced) => {
    const d = routeProtocol({ role, accountType });
    expect(d).toMatchObject({ source: 'identity', category, enforced });
  });
});

describe('routeProtocol: order and edges', () => {
  const cases: [string, RoutingInput, Expected][] = [
    // Step 1 beats everything, the channel included.
    [
      'core_primary with a channel protocol stays PRIVATE',
      { role: 'carbon', accountType: 'core_primary', channelProtocolId: 'tech_protocol_v1' },
      { category: 'PRIVATE', step: 1, enforced: true },
    ],
    [
      'core_primary with a coder persona stays PRIVATE',
      { role: 'carbon', accountType: 'core_primary', personaType: 'coder' },
      { category: 'PRIVATE', step: 1, enforced: true },
    ],
    [
      'core_primary with an npc persona stays PRIVATE',
      { role: 'carbon', accountType: 'core_primary', personaType: 'npc' },
      { category: 'PRIVATE', step: 1, enforced: true },
    ],
    // Step 2: a channel protocol for everyone else, before identity.
    [
      'public user in a configured channel',
      { role: 'carbon', accountType: 'public', channelProtocolId: 'neutral_protocol_v1' },
      { channel: 'neutral_protocol_v1', step: 2, enforced: false },
    ],
    [
      'developer in a configured channel',
      { role: 'silicon', accountType: 'developer', channelProtocolId: 'public_protocol_v1' },
      { channel: 'public_protocol_v1', step: 2, enforced: false },
    ],
    [
      'npc in a configured channel',
      { role: 'silicon', accountType: 'npc', channelProtocolId: 'custom_flow_v2' },
      { channel: 'custom_flow_v2', step: 2, enforced: false },
    ],
    [
      'cso in a configured channel',
      { role: 'cso', accountType: 'public', channelProtocolId: 'public_protocol_v1' },
      { channel: 'public_protocol_v1', step: 2, enforced: false },
    ],
    [
      'coder persona in a configured channel',
      {
        role: 'carbon',
        accountType: 'public',
        personaType: 'coder',
        channelProtocolId: 'public_protocol_v1',
      },
      { channel: 'public_protocol_v1', step: 2, enforced: false },
    ],
    // core_primary with a role other than carbon (outside the allowed pairs): step 1 does not
    // apply, step 2 still excludes every core_primary account.
    [
      'core_primary that is not carbon ignores the channel',
      { role: 'cso', accountType: 'core_primary', channelProtocolId: 'tech_protocol_v1' },
      { category: 'SYSTEM', step: 5, enforced: false },
    ],
    [
      'no channel protocol (null) falls through',
      { role: 'carbon', accountType: 'public', channelProtocolId: null },
      { category: 'PUBLIC', step: 6, enforced: false },
    ],
    // Step 3: developer account or coder persona.
    [
      'developer account',
      { role: 'silicon', accountType: 'developer' },
      { category: 'TECH', step: 3, enforced: false },
    ],
    [
      'coder persona on a public account',
      { role: 'carbon', accountType: 'public', personaType: 'coder' },
      { category: 'TECH', step: 3, enforced: false },
    ],
    [
      'coder persona on an npc account (step 3 before 4)',
      { role: 'silicon', accountType: 'npc', personaType: 'coder' },
      { category: 'TECH', step: 3, enforced: false },
    ],
    [
      'developer account with an npc persona (step 3 before 4)',
      { role: 'silicon', accountType: 'developer', personaType: 'npc' },
      { category: 'TECH', step: 3, enforced: false },
    ],
    [
      'coder persona on a cso (step 3 before 5)',
      { role: 'cso', accountType: 'public', personaType: 'coder' },
      { category: 'TECH', step: 3, enforced: false },
    ],
    // Step 4: npc account or npc persona.
    [
      'npc account',
      { role: 'silicon', accountType: 'npc' },
      { category: 'NEUTRAL', step: 4, enforced: false },
    ],
    [
      'npc persona on a public account',
      { role: 'carbon', accountType: 'public', personaType: 'npc' },
      { category: 'NEUTRAL', step: 4, enforced: false },
    ],
    [
      'npc persona on a cso (step 4 before 5)',
      { role: 'cso', accountType: 'public', personaType: 'npc' },
      { category: 'NEUTRAL', step: 4, enforced: false },
    ],
    [
      'npc account with an unrelated persona',
      { role: 'silicon', accountType: 'npc', personaType: 'assistant' },
      { category: 'NEUTRAL', step: 4, enforced: false },
    ],
    // Step 5: decided by role, not account type.
    [
      'cso (account type public)',
      { role: 'cso', accountType: 'public' },
      { category: 'SYSTEM', step: 5, enforced: false },
    ],
    [
      'carbon public is not SYSTEM',
      { role: 'carbon', accountType: 'public' },
      { category: 'PUBLIC', step: 6, enforced: false },
    ],
    [
      'cso with an unknown persona type',
      { role: 'cso', accountType: 'public', personaType: 'Observer' },
      { category: 'SYSTEM', step: 5, enforced: false },
    ],
    // Persona types match exactly.
    [
      '"Coder" is not "coder"',
      { role: 'carbon', accountType: 'public', personaType: 'Coder' },
      { category: 'PUBLIC', step: 6, enforced: false },
    ],
    [
      'public with no persona',
      { role: 'carbon', accountType: 'public', personaType: null },
      { category: 'PUBLIC', step: 6, enforced: false },
    ],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    const d = routeProtocol(input);
    expect(d.step).toBe(expected.step);
    expect(d.enforced).toBe(expected.enforced);
    if (expected.channel) expect(d).toMatchObject({ source: 'channel', protocolId: expected.channel });
    else expect(d).toMatchObject({ source: 'identity', category: expected.category });
    expect(d.reason.length).toBeGreaterThan(0);
  });
});

describe('protocol ids', () => {
  it.each([
    ['private_protocol_v1', { family: 'private_protocol', version: 1 }, 'PRIVATE'],
    ['tech_protocol_v12', { family: 'tech_protocol', version: 12 }, 'TECH'],
    ['neutral_protocol_v2', { family: 'neutral_protocol', version: 2 }, 'NEUTRAL'],
    ['system_protocol_v1', { family: 'system_protocol', version: 1 }, 'SYSTEM'],
    ['public_protocol_v3', { family: 'public_protocol', version: 3 }, 'PUBLIC'],
    ['observer_onboarding_v1', { family: 'observer_onboarding', version: 1 }, 'CUSTOM'],
    ['my_private_protocol_v1', { family: 'my_private_protocol', version: 1 }, 'CUSTOM'],
  ])('%s', (id, parsed, category) => {
    expect(parseProtocolId(id)).toEqual(parsed);
    expect(categoryOf(id)).toBe(category);
  });
  it.each(['private_protocol', 'Private_protocol_v1', 'x_v0', 'x_v01', 'x-y_v1', '_v1', 'x_v99999999999'])(
    'rejects %s',
    (id) => {
      expect(parseProtocolId(id)).toBeNull();
    },
  );
});

describe('definitionProblems', () => {
  const paths = (id: string, d: unknown, ctx = {}) => definitionProblems(id, def(d), ctx).map((p) => p.path);
  it('accepts every seeded protocol against the seeded base', () => {
    const seedBase = SEED_PROTOCOLS.find((p) => p.id === BASE_TEMPLATE_ID)!;
    for (const { id, ...d } of SEED_PROTOCOLS) {
      const ctx = d.kind === 'reference' ? { base: { id: seedBase.id, definition: seedDef(seedBase) } } : {};
      expect(definitionProblems(id, def(d), ctx), id).toEqual([]);
    }
  });
  it('accepts a reference to a string base with known overrides', () => {
    expect(
      paths(
        'x_v1',
        { kind: 'reference', base: 'base_v1', name: 'X', overrides: { identity: 'Hi {{playerName}}' } },
        { base },
      ),
    ).toEqual([]);
  });
  it.each([
    ['a missing base', { kind: 'reference', base: 'nope_v1', name: 'X' }, {}, ['base']],
    ['itself as base', { kind: 'reference', base: 'x_v1', name: 'X' }, {}, ['base']],
    [
      'a reference-based base',
      { kind: 'reference', base: 'ref_v1', name: 'X' },
      { base: { id: 'ref_v1', definition: def({ kind: 'reference', base: 'base_v1', name: 'R' }) } },
      ['base'],
    ],
    [
      'an override the base lacks',
      { kind: 'reference', base: 'base_v1', name: 'X', overrides: { identty: 'typo' } },
      { base },
      ['overrides.identty'],
    ],
    [
      'an override of a runtime value',
      { kind: 'reference', base: 'base_v1', name: 'X', overrides: { playerName: 'Bob' } },
      { base },
      ['overrides.playerName'],
    ],
    [
      'an override of a structural value',
      { kind: 'string', name: 'X', template: '{{tone}}', overrides: { tone: 'x' } },
      {},
      ['overrides.tone'],
    ],
    [
      'a placeholder with no value',
      { kind: 'string', name: 'X', template: 'Hi {{mystery}}' },
      {},
      ['template'],
    ],
    [
      'an override not in the template',
      { kind: 'string', name: 'X', template: 'Hi', overrides: { extra: 'x' } },
      {},
      ['overrides.extra'],
    ],
    [
      'nested overrides',
      { kind: 'string', name: 'X', template: '{{a}} {{b}}', overrides: { a: '{{b}}', b: 'x' } },
      {},
      ['overrides.a'],
    ],
    [
      'an unknown placeholder in a rule',
      { kind: 'string', name: 'X', template: 'Hi', rules: ['call {{secret}}'] },
      {},
      ['rules.0'],
    ],
    [
      'turning a base into a reference',
      { kind: 'reference', base: 'base_v1', name: 'X' },
      { base, usedAsBaseBy: ['y_v1'] },
      ['kind'],
    ],
  ])('refuses %s', (_name, d, ctx, expected) => {
    expect(paths('x_v1', d, ctx)).toEqual(expected);
  });
  it('allows runtime placeholders in rules and overrides', () => {
    expect(
      paths('x_v1', {
        kind: 'string',
        name: 'X',
        template: '{{greeting}}',
        overrides: { greeting: 'Hello {{playerName}}, {{tone}}' },
        rules: ['Call them {{playerName}}.'],
      }),
    ).toEqual([]);
  });
});

describe('schema', () => {
  it.each([
    ['no kind', { name: 'X', template: 't' }],
    ['string without template', { kind: 'string', name: 'X' }],
    ['reference without base', { kind: 'reference', name: 'X' }],
    ['an unversioned base', { kind: 'reference', name: 'X', base: 'base' }],
    ['both template and base', { kind: 'string', name: 'X', template: 't', base: 'base_v1' }],
    ['"*" with other tools', { kind: 'string', name: 'X', template: 't', tools: ['*', 'a'] }],
    ['a bad tool name', { kind: 'string', name: 'X', template: 't', tools: ['rm -rf'] }],
    [
      'a bad memory access',
      {
        kind: 'string',
        name: 'X',
        template: 't',
        capabilities: { memoryAccess: 'all', adminAccess: false, observer: false },
      },
    ],
    ['an unknown field', { kind: 'string', name: 'X', template: 't', color: 'red' }],
  ])('refuses %s', (_name, d) => {
    expect(protocolDefinitionSchema.safeParse(d).success).toBe(false);
  });
});
