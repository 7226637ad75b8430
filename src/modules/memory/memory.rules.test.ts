import { describe, expect, it } from 'vitest';
import {
  chunkText,
  contentProblem,
  decideOwner,
  fuseHits,
  MEMORY_SOURCES,
  tierOf,
  type MemorySource,
  type MemoryTier,
} from './memory.rules.js';

describe('source → tier (contract: "Memory")', () => {
  const table: [MemorySource, MemoryTier][] = [
    ['world', 'world'],
    ['assistant_core', 'assistant_core'],
    ['shared', 'shared'],
    ['core_belief', 'assistant_core'],
    ['core_beliefs_encoding', 'assistant_core'],
    ['manual_ingestion_text', 'assistant_core'],
    ['document_ingestion', 'assistant_core'],
    ['ingested_screenshot', 'assistant_core'],
    ['image_ocr_extraction', 'assistant_core'],
    ['vision_analysis', 'shared'],
    ['observer_reflection', 'assistant_core'],
  ];
  it.each(table)('%s → %s', (source, tier) => expect(tierOf(source)).toBe(tier));
  it('covers every source in use (spec)', () =>
    expect(new Set(MEMORY_SOURCES)).toEqual(new Set(table.map(([s]) => s))));
});

describe('ownership', () => {
  const A = 100; // the assistant
  const player = { id: 7, admin: false };
  const admin = { id: 1, admin: true };
  const table: [string, Parameters<typeof decideOwner>[0], ReturnType<typeof decideOwner>][] = [
    [
      'player, shared, self',
      { source: 'shared', requestedUserId: undefined, caller: player, assistantUserId: A },
      { ok: true, ownerId: 7, tier: 'shared', mustBeCharacter: false },
    ],
    [
      'player, shared, self named',
      { source: 'shared', requestedUserId: 7, caller: player, assistantUserId: A },
      { ok: true, ownerId: 7, tier: 'shared', mustBeCharacter: false },
    ],
    [
      'player, shared, other',
      { source: 'shared', requestedUserId: 8, caller: player, assistantUserId: A },
      { ok: false, reason: 'forbidden', detail: expect.any(String) },
    ],
    [
      'player, world',
      { source: 'world', requestedUserId: undefined, caller: player, assistantUserId: A },
      { ok: false, reason: 'forbidden', detail: expect.any(String) },
    ],
    [
      'player, vision_analysis',
      { source: 'vision_analysis', requestedUserId: undefined, caller: player, assistantUserId: A },
      { ok: false, reason: 'forbidden', detail: expect.any(String) },
    ],
    [
      'admin, world for someone',
      { source: 'world', requestedUserId: 7, caller: admin, assistantUserId: A },
      { ok: true, ownerId: A, tier: 'world', mustBeCharacter: false },
    ],
    [
      'admin, core, no user',
      { source: 'assistant_core', requestedUserId: undefined, caller: admin, assistantUserId: A },
      { ok: true, ownerId: A, tier: 'assistant_core', mustBeCharacter: true },
    ],
    [
      'admin, core_belief for an NPC',
      { source: 'core_belief', requestedUserId: 55, caller: admin, assistantUserId: A },
      { ok: true, ownerId: 55, tier: 'assistant_core', mustBeCharacter: true },
    ],
    [
      'admin, shared for a player',
      { source: 'shared', requestedUserId: 7, caller: admin, assistantUserId: A },
      { ok: true, ownerId: 7, tier: 'shared', mustBeCharacter: false },
    ],
    [
      'admin, vision_analysis, self',
      { source: 'vision_analysis', requestedUserId: undefined, caller: admin, assistantUserId: A },
      { ok: true, ownerId: 1, tier: 'shared', mustBeCharacter: false },
    ],
  ];
  it.each(table)('%s', (_name, input, expected) => expect(decideOwner(input)).toEqual(expected));
});

describe('chunking', () => {
  it('keeps short content whole', () => expect(chunkText('short', 100, 20)).toEqual(['short']));
  it('splits long content at boundaries with overlap, losing nothing', () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
    const text = words.join(' ');
    const chunks = chunkText(text, 200, 50);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(200);
    for (const w of words) expect(chunks.some((c) => c.split(' ').includes(w))).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const prevWords = chunks[i - 1]!.split(' ');
      expect(prevWords).toContain(chunks[i]!.split(' ')[0]);
    }
  });
  it('terminates on text without spaces', () => {
    const chunks = chunkText('x'.repeat(1000), 300, 100);
    expect(chunks.join('').length).toBeGreaterThanOrEqual(1000);
    expect(chunks.length).toBeLessThan(10);
  });
});

describe('fusion', () => {
  const hit = (
    chunkId: number,
    memoryId: number,
    vectorRank?: number,
    textRank?: number,
    chunkIndex = 0,
    conversationId: number | null = null,
  ) => ({
    chunkId,
    memoryId,
    chunkIndex,
    conversationId,
    vectorRank,
    textRank,
  });
  it('scores first-on-both-sides as 1 and stays in [0, 1], best first', () => {
    const r = fuseHits([hit(1, 10, 1, 1), hit(2, 20, 2), hit(3, 30, undefined, 5)], { sides: 2 });
    expect(r[0]).toEqual({ memoryId: 10, chunkId: 1, similarity: 1 });
    expect(r.map((x) => x.memoryId)).toEqual([10, 20, 30]);
    for (const x of r) expect(x.similarity).toBeGreaterThan(0);
  });
  it('normalises by the sides that took part (full text only)', () => {
    expect(fuseHits([hit(1, 10, undefined, 1)], { sides: 1 })[0]!.similarity).toBe(1);
  });
  it('keeps one result per memory: its best chunk, with a continuity bonus for a neighbour', () => {
    const r = fuseHits([hit(1, 10, 3, undefined, 0), hit(2, 10, 1, undefined, 1), hit(3, 20, 2)], {
      sides: 2,
    });
    expect(r.filter((x) => x.memoryId === 10)).toHaveLength(1);
    expect(r[0]!.chunkId).toBe(2);
    const alone = fuseHits([hit(2, 10, 1, undefined, 1)], { sides: 2 })[0]!.similarity;
    expect(r[0]!.similarity).toBeGreaterThan(alone);
  });
  it('boosts memories of the same conversation', () => {
    const hits = [hit(1, 10, 1), hit(2, 20, 2, undefined, 0, 99)];
    expect(fuseHits(hits, { sides: 2 })[0]!.memoryId).toBe(10);
    expect(fuseHits(hits, { sides: 2, conversationId: 99 })[0]!.memoryId).toBe(20);
  });
});

describe('content limits', () => {
  it.each([
    ['', 'must not be empty'],
    ['  \n\t', 'must not be empty'],
    ['ok', null],
    ['x'.repeat(10), null],
    ['x'.repeat(11), 'must be at most 10 bytes (got 11)'],
    ['éééééé', 'must be at most 10 bytes (got 12)'],
  ])('%j → %s', (content, problem) => expect(contentProblem(content, 10)).toBe(problem));
});
