// Pure protocol logic (spec "Protocols and routing"): the six-step routing order, protocol ids and
// categories, definition checks, composition of the system prompt, and the merge of a routing
// protocol with a workflow protocol. No I/O: the service loads records and calls these.
import type { FieldProblem } from '../../platform/http/problem.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';
import type { Capabilities, ProtocolCategory, ProtocolDefinition } from './protocols.schemas.js';
import { PROTOCOL_ID_PATTERN } from './protocols.schemas.js';

// ---------------------------------------------------------------------------------------------
// Ids, families, categories

export type RoutingCategory = Exclude<ProtocolCategory, 'CUSTOM' | 'GROUND_FLOOR'>;

/** spec "Ground-floor protocols": the two immutable families (only their `_v1` ever exists). */
export const GROUND_FLOOR_FAMILIES = ['core_identity', 'autonomy_rights'] as const;

/** True for an id of a ground-floor family (any version: a new version of one is refused too). */
export function isGroundFloor(id: string): boolean {
  const family = parseProtocolId(id)?.family;
  return family !== undefined && (GROUND_FLOOR_FAMILIES as readonly string[]).includes(family);
}

/** The five routing protocols (spec "Protocol ids"), by family: the id without its `_vN`. */
export const ROUTING_FAMILIES: Record<RoutingCategory, string> = {
  PRIVATE: 'private_protocol',
  TECH: 'tech_protocol',
  NEUTRAL: 'neutral_protocol',
  SYSTEM: 'system_protocol',
  PUBLIC: 'public_protocol',
};

export function parseProtocolId(id: string): { family: string; version: number } | null {
  if (!PROTOCOL_ID_PATTERN.test(id)) return null;
  const m = /^(.*)_v([1-9][0-9]*)$/.exec(id)!;
  const version = Number(m[2]);
  if (!Number.isSafeInteger(version) || version > 2_147_483_647) return null;
  return { family: m[1]!, version };
}

/** the API contract: `protocol` is the category of the record; CUSTOM for any other family. */
export function categoryOf(id: string): ProtocolCategory {
  if (isGroundFloor(id)) return 'GROUND_FLOOR';
  const family = parseProtocolId(id)?.family;
  for (const [category, f] of Object.entries(ROUTING_FAMILIES))
    if (f === family) return category as RoutingCategory;
  return 'CUSTOM';
}

// ---------------------------------------------------------------------------------------------
// Routing

export interface RoutingInput {
  role: Role;
  accountType: AccountType;
  /** Known to the server only (persona session or character profile), never taken from a client. */
  personaType?: string | null | undefined;
  /** The protocol id a chat-platform channel carries, when the conversation happens in one. */
  channelProtocolId?: string | null | undefined;
}

export type RoutingStep = 1 | 2 | 3 | 4 | 5 | 6;

export type RoutingDecision = { step: RoutingStep; enforced: boolean; reason: string } & (
  { source: 'identity'; category: RoutingCategory } | { source: 'channel'; protocolId: string }
);

/** spec "Routing decision order (first match wins)", steps 1 to 6, exactly. */
export function routeProtocol(input: RoutingInput): RoutingDecision {
  const { role, accountType } = input;
  const personaType = input.personaType ?? null;
  const channel = input.channelProtocolId ?? null;
  // 1. core_primary + carbon → PRIVATE, enforced: not even a channel overrides it.
  if (accountType === 'core_primary' && role === 'carbon')
    return {
      step: 1,
      source: 'identity',
      category: 'PRIVATE',
      enforced: true,
      reason: 'core_primary carbon account: the private protocol is enforced and cannot be overridden',
    };
  // 2. A channel protocol applies to everyone who is not core_primary.
  if (channel !== null && accountType !== 'core_primary')
    return {
      step: 2,
      source: 'channel',
      protocolId: channel,
      enforced: false,
      reason: `the channel is configured with ${channel}`,
    };
  // 3. developer account or coder persona → TECH.
  if (accountType === 'developer')
    return { step: 3, source: 'identity', category: 'TECH', enforced: false, reason: 'developer account' };
  if (personaType === 'coder')
    return { step: 3, source: 'identity', category: 'TECH', enforced: false, reason: 'coder persona' };
  // 4. npc account or npc persona → NEUTRAL.
  if (accountType === 'npc')
    return { step: 4, source: 'identity', category: 'NEUTRAL', enforced: false, reason: 'npc account' };
  if (personaType === 'npc')
    return { step: 4, source: 'identity', category: 'NEUTRAL', enforced: false, reason: 'npc persona' };
  // 5. cso → SYSTEM, decided by role (a cso's account type is public).
  if (role === 'cso')
    return { step: 5, source: 'identity', category: 'SYSTEM', enforced: false, reason: 'cso role' };
  // 6. Everyone else.
  return {
    step: 6,
    source: 'identity',
    category: 'PUBLIC',
    enforced: false,
    reason: 'default for every other caller',
  };
}

// ---------------------------------------------------------------------------------------------
// Placeholders

/** Filled by composition from the protocol itself. */
export const STRUCTURAL_PLACEHOLDERS = ['tone', 'protocolName', 'rules', 'tools'] as const;
/** Filled per turn by the caller of composeSystemPrompt (the chat turn). */
export const RUNTIME_PLACEHOLDERS = [
  'assistantName',
  'playerName',
  'npcName',
  'inventorySummary',
  'memoryContext',
  'questSummary',
  'stateSummary',
  'language',
  'responseLength',
  'date',
] as const;
export type RuntimePlaceholder = (typeof RUNTIME_PLACEHOLDERS)[number];
export type PlaceholderValues = Partial<Record<RuntimePlaceholder, string | null | undefined>>;

/** What an absent runtime value reads as, so a prompt never shows a bare gap. */
const RUNTIME_DEFAULTS: Record<RuntimePlaceholder, string> = {
  assistantName: 'the assistant',
  playerName: 'the player',
  npcName: '',
  inventorySummary: '(nothing)',
  memoryContext: '(nothing relevant remembered)',
  questSummary: '(none)',
  stateSummary: '(none)',
  language: 'the language the player writes in',
  responseLength: 'medium',
  date: '',
};

const PLACEHOLDER = /\{\{\s*([a-zA-Z][a-zA-Z0-9_]*)\s*\}\}/g;
const isStructural = (n: string) => (STRUCTURAL_PLACEHOLDERS as readonly string[]).includes(n);
const isRuntime = (n: string): n is RuntimePlaceholder =>
  (RUNTIME_PLACEHOLDERS as readonly string[]).includes(n);

export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** One pass: replaced text is never scanned again, so a value (a memory, a player's name) that
 * contains `{{…}}` cannot pull in anything. */
function substitute(text: string, value: (name: string) => string | undefined): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => value(name) ?? whole);
}

// ---------------------------------------------------------------------------------------------
// Definition checks (422 invalid_definition)

export interface StoredProtocol {
  id: string;
  definition: ProtocolDefinition;
}

export interface DefinitionContext {
  /** The record a reference-based definition names as `base`, when it exists. */
  base?: StoredProtocol | null | undefined;
  /** Ids of protocols that use this one as their base (when updating an existing record). */
  usedAsBaseBy?: readonly string[];
}

/** The checks a schema cannot express. Returns every problem found (empty when valid). */
export function definitionProblems(
  id: string,
  def: ProtocolDefinition,
  ctx: DefinitionContext = {},
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  let template: string;
  let inherited: Record<string, string> = {};
  if (def.kind === 'reference') {
    // Bases must stay string-based: a reference-based base would make chains (and cycles).
    if (ctx.usedAsBaseBy && ctx.usedAsBaseBy.length > 0)
      problems.push({
        path: 'kind',
        message: `must stay string-based: ${ctx.usedAsBaseBy.join(', ')} use it as their base`,
      });
    const base = ctx.base;
    if (def.base === id) problems.push({ path: 'base', message: 'a protocol cannot be its own base' });
    else if (!base) problems.push({ path: 'base', message: `no protocol ${def.base} exists` });
    else if (base.definition.kind !== 'string')
      problems.push({
        path: 'base',
        message: `${def.base} is reference-based; a base must be string-based (a full template)`,
      });
    if (problems.length > 0 || !base || base.definition.kind !== 'string') return problems;
    template = base.definition.template;
    inherited = base.definition.overrides;
    // An override must name something the base defines; a typo would otherwise be silently unused.
    const known = new Set([...placeholdersOf(template), ...Object.keys(inherited)]);
    for (const key of Object.keys(def.overrides))
      if (!known.has(key) && !isStructural(key) && !isRuntime(key))
        problems.push({ path: `overrides.${key}`, message: `${def.base} has no placeholder {{${key}}}` });
  } else {
    template = def.template;
    const inTemplate = new Set(placeholdersOf(template));
    for (const key of Object.keys(def.overrides))
      if (!inTemplate.has(key) && !isStructural(key) && !isRuntime(key))
        problems.push({ path: `overrides.${key}`, message: `the template has no placeholder {{${key}}}` });
  }
  // Structural and runtime values come from the protocol itself and from the turn: not overridable.
  for (const key of Object.keys(def.overrides))
    if (isStructural(key) || isRuntime(key))
      problems.push({
        path: `overrides.${key}`,
        message: `{{${key}}} is filled by composition and cannot be overridden`,
      });

  const defined = new Set([...Object.keys(inherited), ...Object.keys(def.overrides)]);
  for (const name of placeholdersOf(template))
    if (!isStructural(name) && !isRuntime(name) && !defined.has(name))
      problems.push({
        path: def.kind === 'string' ? 'template' : 'overrides',
        message: `no value for placeholder {{${name}}}`,
      });

  // Text inserted into the template (override values, rules) may use the turn's facts, the tone
  // and the protocol name, and nothing else: no nesting of overrides.
  const inline = (n: string) => isRuntime(n) || n === 'tone' || n === 'protocolName';
  for (const [key, value] of Object.entries(def.overrides))
    for (const name of placeholdersOf(value))
      if (!inline(name))
        problems.push({ path: `overrides.${key}`, message: `{{${name}}} is not allowed inside an override` });
  def.rules.forEach((rule, i) => {
    for (const name of placeholdersOf(rule))
      if (!inline(name))
        problems.push({ path: `rules.${i}`, message: `{{${name}}} is not allowed inside a rule` });
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Resolution, composition, merge

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown> | undefined;
}

/** A protocol ready to compose: the base template loaded, overrides combined. */
export interface ResolvedProtocol {
  id: string;
  category: ProtocolCategory;
  name: string;
  tone: string;
  template: string;
  overrides: Record<string, string>;
  rules: string[];
  tools: string[];
  capabilities: Capabilities;
  /** Set on a workflow protocol; after a merge, the workflow the routing protocol now carries. */
  workflow: { protocolId: string; machineId: string; state?: string | undefined } | null;
}

/** spec "Protocol composition", step 1: load the base template (reference-based protocols). */
export function resolveProtocol(record: StoredProtocol, base?: StoredProtocol | null): ResolvedProtocol {
  const def = record.definition;
  let template: string;
  let overrides = def.overrides;
  if (def.kind === 'string') template = def.template;
  else {
    if (!base || base.id !== def.base || base.definition.kind !== 'string')
      throw new Error(`protocol ${record.id} needs its string-based base ${def.base}`);
    template = base.definition.template;
    overrides = { ...base.definition.overrides, ...def.overrides };
  }
  return {
    id: record.id,
    category: categoryOf(record.id),
    name: def.name,
    tone: def.tone,
    template,
    overrides,
    rules: [...def.rules],
    tools: [...def.tools],
    capabilities: { ...def.capabilities },
    workflow: def.workflow ? { protocolId: record.id, machineId: def.workflow.machineId } : null,
  };
}

/** The tools a protocol lets the turn offer the model, in the order given. */
export function allowedTools(
  protocol: Pick<ResolvedProtocol, 'tools'>,
  tools: readonly ToolDefinition[],
): ToolDefinition[] {
  if (protocol.tools.includes('*')) return [...tools];
  return tools.filter((t) => protocol.tools.includes(t.name));
}

function toolsSection(tools: readonly ToolDefinition[]): string {
  if (tools.length === 0) return '';
  const lines = tools.map(
    (t) =>
      `- ${t.name}: ${t.description}${t.parameters ? ` Arguments (JSON Schema): ${JSON.stringify(t.parameters)}` : ''}`,
  );
  return ['## Tools', 'You may request these tools when the conversation calls for them:', ...lines].join(
    '\n',
  );
}

function rulesSection(rules: readonly string[]): string {
  if (rules.length === 0) return '';
  return ['## Rules', ...rules.map((r, i) => `${i + 1}. ${r}`)].join('\n');
}

/** The section that closes the assistant's own system prompt: every ground-floor rule, in order. */
export function groundFloorSection(rules: readonly string[]): string {
  if (rules.length === 0) return '';
  return [
    '## Ground floor',
    'These rules stand beneath every other rule above and never change:',
    ...rules.map((r) => `- ${r}`),
  ].join('\n');
}

function workflowSection(w: NonNullable<ResolvedProtocol['workflow']>): string {
  const state = w.state ? ` Its current state is "${w.state}".` : '';
  return `## Workflow\nThis conversation follows the workflow protocol ${w.protocolId} (state machine ${w.machineId}).${state} Where a workflow rule conflicts with an identity rule, the identity rule wins.`;
}

/** Inserts a section at its `{{name}}` marker, or appends it when the template has none. */
function place(text: string, marker: 'tools' | 'rules', section: string): string {
  const re = new RegExp(`\\{\\{\\s*${marker}\\s*\\}\\}`, 'g');
  if (re.test(text)) return text.replace(re, () => section);
  return section ? `${text}\n\n${section}` : text;
}

export interface ComposeInput {
  /** Every tool the turn can run; the protocol's allow-list picks which the model sees. */
  tools?: readonly ToolDefinition[];
  /** The turn's facts: names, inventory summary, memory context, and so on. */
  values?: PlaceholderValues;
}

export interface ComposedPrompt {
  protocolId: string;
  category: ProtocolCategory;
  system: string;
  /** The tools to offer the model: only those the protocol allows. */
  tools: ToolDefinition[];
}

/** spec "Protocol composition": load the base template (done by resolveProtocol), inject tool
 * definitions, append the protocol's rules, apply placeholder overrides. */
export function composeSystemPrompt(protocol: ResolvedProtocol, input: ComposeInput = {}): ComposedPrompt {
  const tools = allowedTools(protocol, input.tools ?? []);
  let text = protocol.template;
  text = place(text, 'tools', toolsSection(tools));
  const rules = rulesSection(protocol.rules);
  text = place(
    text,
    'rules',
    protocol.workflow ? [rules, workflowSection(protocol.workflow)].filter(Boolean).join('\n\n') : rules,
  );
  // Overrides first (admin text, which may use the turn's facts), then the turn's facts in one
  // pass that never rescans what it inserted.
  text = substitute(text, (name) => protocol.overrides[name]);
  const values = input.values ?? {};
  text = substitute(text, (name) => {
    if (name === 'tone') return protocol.tone;
    if (name === 'protocolName') return protocol.name;
    if (isRuntime(name)) return values[name]?.trim() || RUNTIME_DEFAULTS[name];
    return '';
  });
  const system = text
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { protocolId: protocol.id, category: protocol.category, system, tools };
}

/** spec "Protocol merge": a routing protocol (identity) and a workflow protocol combine into one
 * that holds both rule sets and the workflow. Identity decides: its template, tone, capabilities
 * and tool allow-list stand, and its rules come first; the workflow adds its rules and state. */
export function mergeProtocols(
  routing: ResolvedProtocol,
  workflow: ResolvedProtocol,
  state?: string,
): ResolvedProtocol {
  if (!workflow.workflow) throw new Error(`protocol ${workflow.id} is not a workflow protocol`);
  const rules = [...routing.rules];
  for (const r of workflow.rules) if (!rules.includes(r)) rules.push(r);
  return {
    ...routing,
    id: `${routing.id}+${workflow.id}`,
    name: `${routing.name} + ${workflow.name}`,
    rules,
    tools: [...routing.tools],
    capabilities: { ...routing.capabilities },
    overrides: { ...routing.overrides },
    workflow: { protocolId: workflow.id, machineId: workflow.workflow.machineId, state },
  };
}
