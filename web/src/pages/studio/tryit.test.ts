import { describe, expect, it } from 'vitest';
import { addDelta, addReply, droppedText, ownerOf, previewRequest, usageOf, type Line } from './tryit';

describe('the try-it log', () => {
  it('streams pieces into one line, then the stored reply replaces it with its speaker and usage', () => {
    const asked: Line[] = [{ key: 'm1', role: 'user', text: 'Hi' }];
    let lines = addDelta(asked, 2, 'Hel');
    lines = addDelta(lines, 2, 'lo');
    expect(lines).toEqual([...asked, { key: 'm2', role: 'assistant', text: 'Hello', pending: true }]);
    lines = addReply(lines, {
      messageId: 2,
      text: 'Hello!',
      npcName: 'Mira',
      usage: { inputTokens: 9, outputTokens: 2 },
    });
    expect(lines).toEqual([
      ...asked,
      {
        key: 'm2',
        role: 'assistant',
        text: 'Hello!',
        who: 'Mira',
        usage: { inputTokens: 9, outputTokens: 2 },
      },
    ]);
    expect(addReply(asked, { messageId: 3, text: 'Yes' })).toEqual([
      ...asked,
      { key: 'm3', role: 'assistant', text: 'Yes' },
    ]);
  });

  it.each([
    [undefined, undefined],
    [null, undefined],
    [{ inputTokens: 1 }, undefined],
    [{ inputTokens: '1', outputTokens: 2 }, undefined],
    [
      { inputTokens: 1, outputTokens: 2, extra: true },
      { inputTokens: 1, outputTokens: 2 },
    ],
  ])('reads usage %j as %j', (u, want) => {
    expect(usageOf(u)).toEqual(want);
  });
});

describe('the preview request', () => {
  const base = {
    playerId: 5,
    meId: 5,
    npcId: 7,
    message: 'the forge?',
    mode: 'scene' as const,
    conversationId: 12,
  };
  it.each([
    [{}, { userId: 5, npcUserId: 7, message: 'the forge?', conversationId: 12 }],
    [{ playerId: 9 }, { userId: 9, npcUserId: 7, message: 'the forge?' }],
    [{ conversationId: null }, { userId: 5, npcUserId: 7, message: 'the forge?' }],
    [{ mode: 'direct' as const }, { userId: 5, npcUserId: 7, message: 'the forge?', direct: true }],
    [{ message: '  ' }, { userId: 5, npcUserId: 7, conversationId: 12 }],
  ])('%j asks %j', (change, want) => {
    expect(previewRequest({ ...base, ...change })).toEqual(want);
  });
});

describe('the preview in words', () => {
  const m = { id: 1, source: 'core_belief', tier: 'assistant_core', content: 'x', similarity: 0.5 };
  it('names a memory’s owner', () => {
    const npcs = [{ id: 7, name: 'Mira' }];
    expect(ownerOf({ ...m, owner: null }, npcs)).toBe('the world');
    expect(ownerOf({ ...m, owner: { id: 7, name: '' } }, npcs)).toBe('Mira');
    expect(ownerOf({ ...m, owner: { id: 8, name: 'Tobin' } }, npcs)).toBe('Tobin');
    expect(ownerOf({ ...m, owner: { id: 9, name: '' } }, npcs)).toBe('user 9');
  });

  it('says what the budget dropped', () => {
    expect(droppedText(undefined)).toBe('nothing');
    expect(droppedText({ playerQuests: 0 })).toBe('nothing');
    expect(droppedText({ memories: 3, playerQuests: 1 })).toBe('memories: 3, playerQuests: 1');
  });
});
