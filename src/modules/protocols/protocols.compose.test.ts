// The pure protocol rules, continued: composing the system prompt and merging protocols.
import { describe, expect, it } from 'vitest';
import {
  allowedTools,
  composeSystemPrompt,
  mergeProtocols,
  resolveProtocol,
  type ResolvedProtocol,
} from './protocols.rules.js';
import { base, def, seedDef } from './protocols.fixtures.js';
import { BASE_TEMPLATE_ID, SEED_PROTOCOLS } from './protocols.seeds.js';

const tools = [
  {
    name: 'modifyInventory',
    description: 'Add or remove an item.',
    parameters: { type: 'object', properties: { itemId: { type: 'number' } } },
  },
  { name: 'modifyCurrency', description: 'Change energy coins.' },
  { name: 'lookupMemory', description: 'Search memories.' },
];

function resolved(d: unknown, id = 'x_v1'): ResolvedProtocol {
  const definition = def(d);
  return resolveProtocol({ id, definition }, definition.kind === 'reference' ? base : null);
}

describe('composeSystemPrompt', () => {
  it('loads the base, injects tools, appends rules, applies overrides (spec order)', () => {
    const p = resolved({
      kind: 'reference',
      base: 'base_v1',
      name: 'Mine',
      overrides: { identity: 'You talk to {{playerName}}.' },
      rules: ['Be kind.', 'Be brief.'],
      tools: ['modifyCurrency'],
    });
    const out = composeSystemPrompt(p, {
      tools,
      values: { assistantName: 'Ava', playerName: 'Bob', memoryContext: 'Bob likes tea.' },
    });
    expect(out.system).toBe(
      'You are Ava. You talk to Bob.\n## Rules\n1. Be kind.\n2. Be brief.\n## Tools\nYou may request these tools when the conversation calls for them:\n- modifyCurrency: Change energy coins.\nMemory: Bob likes tea.',
    );
    expect(out.tools.map((t) => t.name)).toEqual(['modifyCurrency']);
    expect(out).toMatchObject({ protocolId: 'x_v1', category: 'CUSTOM' });
  });

  it('appends tools and rules when the template has no markers, and fills defaults', () => {
    const p = resolved({
      kind: 'string',
      name: 'Plain',
      template: 'Hello {{playerName}}. Tone: {{tone}}. ({{protocolName}})',
      tone: 'calm',
      rules: ['One.'],
      tools: ['*'],
    });
    const out = composeSystemPrompt(p, { tools });
    expect(out.system).toBe(
      'Hello the player. Tone: calm. (Plain)\n\n## Tools\nYou may request these tools when the conversation calls for them:\n' +
        '- modifyInventory: Add or remove an item. Arguments (JSON Schema): {"type":"object","properties":{"itemId":{"type":"number"}}}\n' +
        '- modifyCurrency: Change energy coins.\n- lookupMemory: Search memories.\n\n## Rules\n1. One.',
    );
    expect(out.tools).toHaveLength(3);
  });

  it('never expands placeholders inside values (a memory or name cannot pull in anything)', () => {
    const p = resolved({
      kind: 'string',
      name: 'P',
      template: '{{playerName}} | {{memoryContext}} | {{secretNote}}',
      overrides: { secretNote: 'classified' },
    });
    const out = composeSystemPrompt(p, {
      values: { playerName: '{{secretNote}}', memoryContext: '{{tools}} {{rules}}' },
    });
    expect(out.system).toBe('{{secretNote}} | {{tools}} {{rules}} | classified');
  });

  it('offers no tools when the protocol allows none', () => {
    const p = resolved({ kind: 'string', name: 'P', template: 'x {{tools}}', tools: [] });
    const out = composeSystemPrompt(p, { tools });
    expect(out.tools).toEqual([]);
    expect(out.system).toBe('x');
  });

  it('gives each seeded protocol its tone and rules', () => {
    const seedBase = SEED_PROTOCOLS.find((p) => p.id === BASE_TEMPLATE_ID)!;
    const baseRecord = { id: seedBase.id, definition: seedDef(seedBase) };
    const compose = (id: string) => {
      const { id: _id, ...d } = SEED_PROTOCOLS.find((p) => p.id === id)!;
      return composeSystemPrompt(resolveProtocol({ id, definition: def(d) }, baseRecord), {
        tools,
        values: { assistantName: 'Ava', playerName: 'Bob', inventorySummary: 'Sword x1; 10 energy coins' },
      });
    };
    const priv = compose('private_protocol_v1');
    expect(priv.system).toMatch(/intimate/);
    expect(priv.system).toMatch(/feelings/);
    expect(priv.system).toContain('Sword x1; 10 energy coins');
    const tech = compose('tech_protocol_v1');
    expect(tech.system).toMatch(/technical/);
    expect(tech.system).toMatch(/no emotional language/i);
    expect(tech.system).toMatch(/admin access/);
    const neutral = compose('neutral_protocol_v1');
    expect(neutral.system).toMatch(/brief/);
    expect(neutral.tools).toEqual([]);
    expect(compose('system_protocol_v1').system).toMatch(/meta-observer|meta-conscious/);
    expect(compose('public_protocol_v1').system).toMatch(/professional and friendly, with clear boundaries/);
    for (const id of [
      'private_protocol_v1',
      'tech_protocol_v1',
      'neutral_protocol_v1',
      'system_protocol_v1',
      'public_protocol_v1',
    ])
      expect(compose(id).system).not.toMatch(/\{\{/);
  });
});

describe('mergeProtocols', () => {
  const routing = resolved(
    {
      kind: 'string',
      name: 'Private',
      template: 'Identity. {{rules}}',
      rules: ['Stay yourself.'],
      tools: ['modifyCurrency'],
      capabilities: { memoryAccess: 'full', adminAccess: false, observer: false },
    },
    'private_protocol_v1',
  );
  const workflow = resolved(
    {
      kind: 'string',
      name: 'Onboarding',
      template: 'unused',
      rules: ['Record evidence.', 'Stay yourself.'],
      tools: ['*'],
      workflow: { machineId: 'documentation_flow_v1' },
    },
    'observer_onboarding_v1',
  );

  it('keeps identity first and adds the workflow rules and state', () => {
    const merged = mergeProtocols(routing, workflow, 'triage');
    expect(merged).toMatchObject({
      id: 'private_protocol_v1+observer_onboarding_v1',
      category: 'PRIVATE',
      rules: ['Stay yourself.', 'Record evidence.'],
      tools: ['modifyCurrency'],
      capabilities: { memoryAccess: 'full' },
      workflow: { protocolId: 'observer_onboarding_v1', machineId: 'documentation_flow_v1', state: 'triage' },
    });
    const out = composeSystemPrompt(merged, { tools });
    expect(out.system).toContain('1. Stay yourself.\n2. Record evidence.');
    expect(out.system).toContain(
      '## Workflow\nThis conversation follows the workflow protocol observer_onboarding_v1 (state machine documentation_flow_v1). Its current state is "triage".',
    );
    // The workflow cannot widen what identity allows.
    expect(allowedTools(merged, tools).map((t) => t.name)).toEqual(['modifyCurrency']);
  });

  it('refuses a protocol that is not a workflow protocol', () => {
    expect(() => mergeProtocols(routing, routing)).toThrow(/not a workflow protocol/);
  });
});
