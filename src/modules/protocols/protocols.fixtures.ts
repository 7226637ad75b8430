// Protocol records shared by the rules tests: a definition parsed as the API would, a seeded
// protocol's definition, and a string-based base for reference protocols.
import type { StoredProtocol } from './protocols.rules.js';
import { protocolDefinitionSchema, type ProtocolDefinition } from './protocols.schemas.js';
import type { SEED_PROTOCOLS } from './protocols.seeds.js';

export const def = (d: unknown): ProtocolDefinition => protocolDefinitionSchema.parse(d);
export const seedDef = ({ id: _id, ...d }: (typeof SEED_PROTOCOLS)[number]) => def(d);
export const base: StoredProtocol = {
  id: 'base_v1',
  definition: def({
    kind: 'string',
    name: 'Base',
    template: 'You are {{assistantName}}. {{identity}}\n{{rules}}\n{{tools}}\nMemory: {{memoryContext}}',
    overrides: { identity: '' },
  }),
};
