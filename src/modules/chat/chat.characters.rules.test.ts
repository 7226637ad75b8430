// The character rules as tables: who a message addresses, the card a prompt opens with, a
// scene's history attributed to its speakers, and memories labelled by whose they are.
import { describe, expect, it } from 'vitest';
import type { RetrievedMemory } from '../memory/index.js';
import {
  addressedSpeakers,
  attributedHistory,
  cardSection,
  characterMemorySections,
  type HistoryLine,
} from './chat.characters.rules.js';
import type { Speaker } from './chat.types.js';

const brom: Speaker = { id: 2, name: 'Brom', description: 'the smith' };
const maela: Speaker = { id: 3, name: 'Maela', description: 'the innkeeper' };
const oldTom: Speaker = { id: 4, name: 'Old Tom', description: '' };

describe('addressedSpeakers', () => {
  it.each<[string, string[]]>([
    ['Maela, what news from the road?', ['Maela']],
    ['what news, maela?', ['Maela']],
    ['How much is a room at the inn?', []],
    ['Brom and Maela, listen!', ['Brom', 'Maela']],
    ['Maela and Brom, listen!', ['Maela', 'Brom']],
    ['Bromwell is not Brom', ['Brom']],
    ['Bromwell came by', []],
    ['Hey Old Tom!', ['Old Tom']],
    ['Tom?', []],
  ])('%s', (text, names) => {
    expect(addressedSpeakers(text, [brom, maela, oldTom]).map((s) => s.name)).toEqual(names);
  });
});

describe('cardSection', () => {
  it.each<[Speaker, string]>([
    [brom, 'You are Brom. the smith'],
    [{ ...oldTom }, 'You are Old Tom.'],
    [
      {
        ...brom,
        card: {
          personality: 'Gruff',
          speakingStyle: 'Short',
          goals: ['A blade', 'An apprentice'],
          playerMemory: 'own',
        },
      },
      'You are Brom. the smith\nPersonality: Gruff\nHow you speak: Short\nWhat you want:\n- A blade\n- An apprentice',
    ],
  ])('%#', (speaker, expected) => {
    expect(cardSection(speaker)).toBe(expected);
  });
});

describe('attributedHistory', () => {
  const line = (
    id: number,
    role: HistoryLine['role'],
    text: string,
    npc: number | null = null,
  ): HistoryLine => ({
    id,
    role,
    text,
    npc_user_id: npc,
  });
  const names = new Map([
    [2, 'Brom'],
    [3, 'Maela'],
  ]);
  const p = { playerName: 'Alice', names, fallbackName: 'Assistant' };
  it.each<[string, HistoryLine[], number | null, { role: string; content: string }[]]>([
    [
      'a one-to-one thread: plain turns',
      [line(1, 'user', 'hi'), line(2, 'assistant', 'hello', 2)],
      2,
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    ],
    [
      "another character's line: every line named, only the speaker's own as assistant",
      [line(1, 'user', 'hi'), line(2, 'assistant', 'welcome', 3), line(3, 'assistant', 'hello', 2)],
      2,
      [
        { role: 'user', content: 'Alice: hi' },
        { role: 'user', content: 'Maela: welcome' },
        { role: 'assistant', content: 'hello' },
      ],
    ],
    [
      "the director's turn: no line is its own",
      [line(1, 'user', 'hi'), line(2, 'assistant', 'hello', 2)],
      null,
      [
        { role: 'user', content: 'Alice: hi' },
        { role: 'user', content: 'Brom: hello' },
      ],
    ],
    [
      'a speaker without a name: the fallback',
      [line(1, 'assistant', 'old', 9)],
      2,
      [{ role: 'user', content: 'Assistant: old' }],
    ],
  ])('%s', (_what, lines, speakerId, expected) => {
    expect(attributedHistory(lines, { ...p, speakerId })).toEqual(expected);
  });
});

describe('characterMemorySections', () => {
  const m = (
    id: number,
    userId: number,
    tier: RetrievedMemory['tier'],
    content: string,
  ): RetrievedMemory => ({
    id,
    userId,
    content,
    source: 'shared',
    tier,
    conversationId: null,
    similarity: 1,
    createdAt: new Date(0),
  });
  it('labels each section by whose memories they are', () => {
    const text = characterMemorySections(
      [
        m(1, 9, 'world', 'The king is ill'),
        m(2, 2, 'assistant_core', 'Forge never cools'),
        m(3, 3, 'assistant_core', 'Rooms cost five silver'),
        m(4, 7, 'shared', 'Alice: my horse is Blaze'),
      ],
      { speakers: [brom, maela], playerUserId: 7, playerName: 'Alice' },
    );
    expect(text).toBe(
      [
        'World knowledge (shared by everyone):\n- The king is ill',
        "What Brom knows (Brom's own memories):\n- Forge never cools",
        "What Maela knows (Maela's own memories):\n- Rooms cost five silver",
        'What Brom and Maela have heard from Alice:\n- Alice: my horse is Blaze',
      ].join('\n\n'),
    );
    expect(characterMemorySections([], { speakers: [brom], playerUserId: 7, playerName: 'Alice' })).toBe('');
  });
});
