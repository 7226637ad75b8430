// The turn's context as a table: what each protocol's reach keeps, and what the budget drops first.
import { describe, expect, it } from 'vitest';
import type { RetrievedMemory } from '../memory/index.js';
import {
  fitContext,
  type GatheredContext,
  type MemoryAccess,
  type ProtocolContext,
} from './chat.context.rules.js';

const PLAYER = 1;
const MIRA = 2;
const OREN = 3;
let nextId = 1;
const memory = (tier: RetrievedMemory['tier'], userId: number, content: string): RetrievedMemory => ({
  id: nextId++,
  userId,
  content,
  source: tier === 'world' ? 'world' : tier === 'assistant_core' ? 'assistant_core' : 'shared',
  tier,
  conversationId: null,
  similarity: null,
  createdAt: new Date('2026-11-01T00:00:00Z'),
});
const relationship = (
  npcUserId: number,
  npcName: string,
  affinity: number,
  flags: Record<string, boolean>,
) => ({
  userId: PLAYER,
  npcUserId,
  npcName,
  affinity,
  flags,
  updatedAt: '2026-11-01T00:00:00.000Z',
});

const gathered = (): GatheredContext => ({
  playerUserId: PLAYER,
  playerName: 'Alice',
  npc: { name: 'Mira', description: 'a smith', assistant_user_id: MIRA },
  memories: [
    ...Array.from({ length: 12 }, (_, i) => memory('shared', PLAYER, `personal ${i}`)),
    ...Array.from({ length: 5 }, (_, i) => memory('world', 99, `world ${i}`)),
    ...Array.from({ length: 7 }, (_, i) => memory('assistant_core', MIRA, `mira ${i}`)),
  ],
  speakerState: {
    persona: { name: 'Mira', description: 'a smith', personaType: null },
    emotions: { joy: 0.8 },
    config: {},
  },
  relationships: [
    relationship(MIRA, 'Mira', 0.4, { metAtForge: true, owesDebt: false }),
    relationship(OREN, 'Oren', -0.2, { rival: true }),
  ],
  quests: [
    {
      questId: 1,
      title: 'Relight the lighthouse',
      description: 'Bring oil to the old lighthouse.',
      objectives: ['Buy oil', 'Climb the tower', 'Light the lamp'],
      status: 'active',
      progress: 0.5,
      step: 1,
      updatedAt: '',
    },
    {
      questId: 2,
      title: 'Find the map',
      description: 'A map hidden in the archive.',
      objectives: ['Search the archive'],
      status: 'completed',
      progress: 1,
      step: null,
      updatedAt: '',
    },
  ],
  inventory: { items: [{ item_id: 1, name: 'Sword', quantity: 1 }], energyCoins: 42 },
});

const protocol = (memoryAccess: MemoryAccess): ProtocolContext => ({
  protocolId: 'p',
  category: 'PUBLIC',
  enforced: false,
  capabilities: { memoryAccess, adminAccess: false, observer: false },
});

const knowledgeOf = (access: MemoryAccess) => fitContext(gathered(), protocol(access), 100_000).knowledge;
const count = (text: string, word: string) => text.split('\n').filter((l) => l.includes(word)).length;

describe('fitContext', () => {
  it.each<
    [MemoryAccess, { personal: number; world: number; speaker: number; others: boolean; closed: boolean }]
  >([
    ['full', { personal: 10, world: 4, speaker: 6, others: true, closed: true }],
    ['standard', { personal: 6, world: 4, speaker: 4, others: false, closed: true }],
    ['limited', { personal: 0, world: 3, speaker: 3, others: false, closed: false }],
  ])('%s memory access reaches its tiers and relationships', (access, want) => {
    const { context, values, dropped } = fitContext(gathered(), protocol(access), 100_000);
    const m = context.memoryContext;
    expect(count(m.personalContext, 'personal')).toBe(want.personal);
    expect(count(m.worldContext, 'world')).toBe(want.world);
    expect(count(m.assistantContext, 'mira')).toBe(want.speaker);
    expect(values.stateSummary).toContain("Mira's emotions: joy 0.8");
    expect(values.stateSummary).toContain('Mira and Alice: affinity 0.4; flags: metAtForge');
    expect(values.stateSummary.includes('Oren and Alice: affinity -0.2; flags: rival')).toBe(want.others);
    expect(values.questSummary).toContain('- Relight the lighthouse: active, 50% done');
    // An active quest reaches the model with its description, objectives and current step.
    expect(values.questSummary).toContain('Bring oil to the old lighthouse.');
    expect(values.questSummary).toContain('1. Buy oil (done)');
    expect(values.questSummary).toContain('2. Climb the tower (current step)');
    expect(values.questSummary).toContain('3. Light the lamp');
    expect(values.questSummary).not.toContain('A map hidden in the archive.');
    expect(values.questSummary.includes('Find the map: completed')).toBe(want.closed);
    expect(values.inventorySummary).toBe('Sword x 1\nEnergy coins: 42');
    expect(context.systemWideKnowledge).toEqual({ protocol: protocol(access) });
    expect(knowledgeOf(access)).toBe('');
    expect(dropped).toEqual({});
  });

  it('keeps the relationship with every speaker of a group', () => {
    const { values } = fitContext(gathered(), protocol('standard'), 100_000, [MIRA, OREN]);
    expect(values.stateSummary).toContain('Mira and Alice: affinity 0.4');
    expect(values.stateSummary).toContain('Oren and Alice: affinity -0.2');
  });

  it('drops closed quests, other relationships, items, then the least relevant memories, in that order', () => {
    const full = fitContext(gathered(), protocol('full'), 100_000);
    const fullCost = Math.ceil(
      [...Object.values(full.values), ...Object.values(full.context.memoryContext), full.knowledge].join('\n')
        .length / 4,
    );
    // A little under: only the first part goes.
    const slightly = fitContext(gathered(), protocol('full'), fullCost - 2);
    expect(slightly.dropped).toEqual({ closed_quests: 1 });
    expect(slightly.values.questSummary).not.toContain('Find the map');
    // Far under: everything droppable goes before the kept parts, memories from the bottom up.
    const tight = fitContext(gathered(), protocol('full'), 60);
    expect(tight.dropped).toMatchObject({ closed_quests: 1, other_relationships: 1, items: 1 });
    expect(tight.dropped.memories).toBeGreaterThan(0);
    expect(tight.values.inventorySummary).toBe('(no items)\nEnergy coins: 42');
    expect(tight.values.stateSummary).toContain('Mira and Alice: affinity 0.4');
    expect(tight.values.questSummary).toContain('Relight the lighthouse');
    // The kept memories are the most relevant of those the reach allows, in retrieval order.
    const content = (ms: RetrievedMemory[]) => ms.map((m) => m.content);
    expect(content(tight.context.memories)).toEqual(
      content(full.context.memories).slice(0, full.context.memories.length - tight.dropped.memories!),
    );
  });

  it('lists system figures and observer events when given, and drops events before items', () => {
    const g = {
      ...gathered(),
      system: { users: 3 },
      observers: { observers: [], recentEvents: [{ text: 'a' }, { text: 'b' }] },
    };
    const { context, knowledge } = fitContext(
      g,
      { ...protocol('standard'), clientType: 'game_client', channelId: 'c1' },
      100_000,
    );
    expect(knowledge).toBe(
      [
        '## System knowledge',
        'This turn comes from: client game_client, channel c1.',
        'System figures: {"users":3}',
        'Observers: []',
        '- {"text":"a"}',
        '- {"text":"b"}',
      ].join('\n'),
    );
    expect(context.systemWideKnowledge).toMatchObject({
      system: { users: 3 },
      observers: { recentEvents: [{ text: 'a' }, { text: 'b' }] },
    });
    const tight = fitContext(g, protocol('standard'), 60);
    expect(tight.dropped).toMatchObject({ recent_events: 2, items: 1 });
    expect(tight.context.systemWideKnowledge).toMatchObject({ observers: { recentEvents: [] } });
  });
});
