// Protocols and API keys as the admin overview edits them: a protocol's definition with its
// edited fields, the rules as typed, how a protocol is marked, and an API key's scopes. Pure:
// tested alone.
import type { Schemas } from '../../api/client';

type Protocol = Schemas['Protocol'];
export type Scope = Schemas['ApiKey']['scopes'][number];

/** The scopes an API key may be given, in the order the form offers them. */
export const SCOPES: readonly Scope[] = ['sync:read', 'sync:write', 'chat-platform:command'];

/** The scopes with one turned on or off. */
export const withScope = (scopes: Scope[], scope: Scope, on: boolean): Scope[] =>
  on ? [...scopes, scope] : scopes.filter((s) => s !== scope);

/** A protocol's rules as typed, one a line (blank lines dropped); both protocol forms use it. */
export const ruleLines = (text: string) =>
  text
    .split('\n')
    .map((r) => r.trim())
    .filter(Boolean);

/** The fields the protocol editor changes. */
export interface ProtocolEdit {
  description: string;
  tone: string;
  rules: string[];
}

/** A protocol's definition as PUT takes it, with the editable fields replaced. */
export function definitionOf(p: Protocol, edit: ProtocolEdit): Schemas['ProtocolUpdateInput'] {
  const common = {
    name: p.name,
    description: edit.description,
    tone: edit.tone,
    rules: edit.rules,
    tools: p.tools,
    overrides: p.overrides,
    capabilities: p.capabilities,
    ...(p.workflow ? { workflow: p.workflow } : {}),
  };
  return p.kind === 'string'
    ? { kind: 'string', template: p.template ?? '', ...common }
    : { kind: 'reference', base: p.base ?? '', ...common };
}

/** What kind of protocol it is, as the table says: ground floor (never edited), built in, custom. */
export function protocolOrigin(
  p: Pick<Protocol, 'immutable' | 'builtin'>,
): 'immutable' | 'built in' | 'custom' {
  if (p.immutable) return 'immutable';
  return p.builtin ? 'built in' : 'custom';
}

/** The protocols a new one may be based on: string-based, not of the ground floor. */
export const protocolBases = (protocols: Protocol[]) =>
  protocols.filter((p) => p.kind === 'string' && !p.immutable);
