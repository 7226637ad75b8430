// The turn's context, pure (spec: "Conversation context"): what each owner gave the turn (memory
// retrieval, the speaking character's state, the player's relationships and quests, the inventory,
// system knowledge) cut to what the routed protocol may reach and to a token budget, then laid out
// as the prompt's sections. chat.context.ts reads the parts; this file decides what the model sees.
import type { ConversationContext, RetrievedMemory } from '../memory/index.js';
import type { CharacterState, PlayerQuest, Relationship } from '../characters/index.js';
import type { Capabilities } from '../protocols/index.js';
import { inventorySummary } from '../inventory/index.js';

export type MemoryAccess = Capabilities['memoryAccess'];

/** Memories per tier each access level gets (docs/ARCHITECTURE.md "What a protocol may reach"):
 * full opens more of the player's history, limited none of it (world and the speaker only). */
export const TIER_BUDGET: Record<MemoryAccess, { world: number; assistant: number; personal: number }> = {
  full: { world: 4, assistant: 6, personal: 10 },
  standard: { world: 4, assistant: 4, personal: 6 },
  limited: { world: 3, assistant: 3, personal: 0 },
};
/** What retrieval is asked for: enough for the widest budget, so it can start before routing. */
export const RETRIEVAL_TIERS = TIER_BUDGET.full;

/** The routing decision as the context records it (the spec's "protocol context"). */
export interface ProtocolContext {
  protocolId: string;
  category: string;
  enforced: boolean;
  capabilities: Capabilities;
  channelId?: string | undefined;
  clientType?: string | undefined;
}

/** What the owners gave the turn, before the protocol's reach and the budget apply. */
export interface GatheredContext {
  playerUserId: number;
  playerName: string;
  npc: ConversationContext['npcInfo'];
  /** Retrieval order (best first), every tier. */
  memories: RetrievedMemory[];
  /** The speaking character's state (persona, emotions, config). */
  speakerState: CharacterState | undefined;
  /** A scene's other speakers' emotions (each speaker's state reaches the director). */
  otherSpeakers?: { name: string; emotions: Record<string, number> }[] | undefined;
  /** The player's relationships (the speaker's among them when there is one). */
  relationships: Relationship[];
  quests: PlayerQuest[];
  inventory: { items: { item_id: number; name: string; quantity: number }[]; energyCoins: number };
  /** Admin access: the system's figures. */
  system?: Record<string, unknown> | undefined;
  /** Observer capabilities: observers and the newest timeline events. */
  observers?: Record<string, unknown> | undefined;
}

/** A part of the context left out, in the order parts are dropped. */
export type DroppedPart = 'closed_quests' | 'other_relationships' | 'recent_events' | 'items' | 'memories';
export const DROP_ORDER: readonly DroppedPart[] = [
  'closed_quests',
  'other_relationships',
  'recent_events',
  'items',
  'memories',
];

export interface FittedContext {
  context: ConversationContext;
  /** The prompt's runtime placeholders this context fills. */
  values: { questSummary: string; stateSummary: string; inventorySummary: string };
  /** The system prompt's closing section of what the protocol grants beyond the conversation
   * (the turn's client and channel, system figures, observers and events); '' when none. */
  knowledge: string;
  /** What the budget (or the protocol's reach) left out: part → how many entries. */
  dropped: Partial<Record<DroppedPart, number>>;
}

const MAX_ITEMS = 50;

/** A rough token count (about four characters a token): enough to keep a budget, no tokenizer. */
export const tokensOf = (text: string) => Math.ceil(text.length / 4);

const percent = (p: number) => `${Math.round(p * 100)}%`;

/** A quest as the model reads it: title, status and progress, then (for an active quest) its
 * description and its objectives with the player's current step marked. */
function questLine(q: PlayerQuest): string {
  const head = `- ${q.title}: ${q.status}${q.status === 'active' ? `, ${percent(q.progress)} done` : ''}`;
  if (q.status !== 'active') return head;
  const lines = [head];
  if (q.description) lines.push(`  ${q.description}`);
  q.objectives.forEach((o, i) => {
    const mark = q.step === null ? '' : i < q.step ? ' (done)' : i === q.step ? ' (current step)' : '';
    lines.push(`  ${i + 1}. ${o}${mark}`);
  });
  return lines.join('\n');
}

function questLines(quests: PlayerQuest[]): string {
  return quests.map(questLine).join('\n');
}

function relationshipLine(r: Relationship, playerName: string): string {
  const flags = Object.entries(r.flags)
    .filter(([, on]) => on)
    .map(([name]) => name);
  return `${r.npcName} and ${playerName}: affinity ${r.affinity}${flags.length ? `; flags: ${flags.join(', ')}` : ''}`;
}

function stateLines(g: GatheredContext, speakerIds: number[], others: Relationship[]): string {
  const lines: string[] = [];
  for (const s of [
    { name: g.npc.name, emotions: g.speakerState?.emotions ?? {} },
    ...(g.otherSpeakers ?? []),
  ]) {
    const emotions = Object.entries(s.emotions);
    if (emotions.length)
      lines.push(`${s.name}'s emotions: ${emotions.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  for (const id of speakerIds) {
    const r = g.relationships.find((x) => x.npcUserId === id);
    if (r) lines.push(relationshipLine(r, g.playerName));
  }
  for (const r of others) lines.push(relationshipLine(r, g.playerName));
  return lines.join('\n');
}

/** systemWideKnowledge as the model reads it. */
function knowledgeSection(k: Record<string, unknown>, protocol: ProtocolContext): string {
  const lines: string[] = [];
  const from = [
    protocol.clientType && `client ${protocol.clientType}`,
    protocol.channelId && `channel ${protocol.channelId}`,
  ].filter(Boolean);
  if (from.length) lines.push(`This turn comes from: ${from.join(', ')}.`);
  if (k.system) lines.push(`System figures: ${JSON.stringify(k.system)}`);
  const seen = k.observers as { observers?: unknown; recentEvents?: unknown[] } | undefined;
  if (seen) {
    lines.push(`Observers: ${JSON.stringify(seen.observers ?? [])}`);
    for (const e of seen.recentEvents ?? []) lines.push(`- ${JSON.stringify(e)}`);
  }
  return lines.length ? ['## System knowledge', ...lines].join('\n') : '';
}

const memoryLines = (ms: RetrievedMemory[]) => ms.map((m) => `- ${m.content}`).join('\n');

/** The context the routed protocol may reach, within `budgetTokens` for its variable parts. Parts
 * go in DROP_ORDER while the estimate is over the budget: closed quests, relationships with other
 * characters, the newest events, inventory items (the balance stays), then memories from the
 * least relevant up. The speaker's state, each speaker's relationship and the active quests
 * always stay. */
export function fitContext(
  g: GatheredContext,
  protocol: ProtocolContext,
  budgetTokens: number,
  /** Who speaks (the lead first): the relationship with each is kept. */
  speakerIds: number[] = [g.npc.assistant_user_id],
): FittedContext {
  const access = protocol.capabilities.memoryAccess;
  const per = TIER_BUDGET[access];
  const isWorld = (m: RetrievedMemory) => m.tier === 'world';
  const isSpeaker = (m: RetrievedMemory) => speakerIds.includes(m.userId) && m.tier === 'assistant_core';
  const isPersonal = (m: RetrievedMemory) => m.userId === g.playerUserId && m.tier !== 'world';
  const picked = new Set([
    ...g.memories.filter(isWorld).slice(0, per.world),
    // Each speaker's own memories, up to the tier's share each.
    ...speakerIds.flatMap((id) =>
      g.memories.filter((m) => isSpeaker(m) && m.userId === id).slice(0, per.assistant),
    ),
    ...g.memories.filter(isPersonal).slice(0, per.personal),
  ]);
  let memories = g.memories.filter((m) => picked.has(m));
  const active = g.quests.filter((q) => q.status === 'active');
  let closed = access === 'limited' ? [] : g.quests.filter((q) => q.status !== 'active');
  // Other characters' relationships are part of the player's whole history: full access only.
  let others = access === 'full' ? g.relationships.filter((r) => !speakerIds.includes(r.npcUserId)) : [];
  // A hoard is listed by its first entries only: the prompt names what matters, not a ledger.
  let items = g.inventory.items.slice(0, MAX_ITEMS);
  const events = (g.observers?.recentEvents as unknown[] | undefined) ?? [];
  let eventCount = events.length;
  const dropped: FittedContext['dropped'] = {};
  if (g.inventory.items.length > MAX_ITEMS) dropped.items = g.inventory.items.length - MAX_ITEMS;

  const render = () => {
    const ms = memories;
    const context: ConversationContext = {
      playerState: {
        ...(g.speakerState ?? {}),
        relationships: g.relationships.filter((r) => speakerIds.includes(r.npcUserId)),
        ...(others.length ? { otherRelationships: others } : {}),
      },
      playerQuests: { active, ...(closed.length ? { closed } : {}) },
      playerInventory: { items, energyCoins: g.inventory.energyCoins },
      npcInfo: g.npc,
      memoryContext: {
        worldContext: memoryLines(ms.filter(isWorld)),
        assistantContext: memoryLines(ms.filter(isSpeaker)),
        personalContext: memoryLines(ms.filter(isPersonal)),
      },
      systemWideKnowledge: {
        protocol,
        ...(g.system ? { system: g.system } : {}),
        ...(g.observers ? { observers: { ...g.observers, recentEvents: events.slice(0, eventCount) } } : {}),
      },
      memories: ms,
    };
    const values = {
      questSummary: questLines([...active, ...closed]),
      stateSummary: stateLines(g, speakerIds, others),
      inventorySummary: inventorySummary(items, g.inventory.energyCoins),
    };
    const knowledge = knowledgeSection(context.systemWideKnowledge as Record<string, unknown>, protocol);
    return { context, values, knowledge };
  };
  const cost = (r: ReturnType<typeof render>) =>
    tokensOf([...Object.values(r.values), ...Object.values(r.context.memoryContext), r.knowledge].join('\n'));

  const drop: Record<DroppedPart, () => boolean> = {
    closed_quests: () => closed.length > 0 && ((closed = closed.slice(0, -1)), true),
    other_relationships: () => others.length > 0 && ((others = others.slice(0, -1)), true),
    recent_events: () => eventCount > 0 && ((eventCount -= 1), true),
    items: () => items.length > 0 && ((items = items.slice(0, -1)), true),
    memories: () => memories.length > 0 && ((memories = memories.slice(0, -1)), true),
  };
  let out = render();
  for (const part of DROP_ORDER) {
    while (cost(out) > budgetTokens && drop[part]()) {
      dropped[part] = (dropped[part] ?? 0) + 1;
      out = render();
    }
  }
  return { ...out, dropped };
}
