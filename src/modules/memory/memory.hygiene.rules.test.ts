import { describe, expect, it } from 'vitest';
import {
  carriesNothing,
  exchangeContent,
  nearDuplicateOf,
  offlineSupersessions,
  replyCarriesNothing,
  statedFacts,
} from './memory.hygiene.rules.js';

describe('a line that carries nothing', () => {
  const table: [string, boolean][] = [
    ['1', true],
    ['42', true],
    ['hello there', true],
    ['Hi!', true],
    ['ok thanks', true],
    ['how are you?', true],
    ['Good morning', true],
    ['yes please', true],
    ['Blaze', true],
    ['1 2 3', true],
    ["I'm Sam", false],
    ['My horse is called Blaze.', false],
    ['What is my horse called?', false],
    ['hello, my name is Sam', false],
  ];
  it.each(table)('%j → %s', (text, nothing) => expect(carriesNothing(text)).toBe(nothing));
});

describe('a reply that carries nothing', () => {
  const table: [string, boolean][] = [
    ["I don't remember anything about that yet. Could you tell me?", true],
    ["I don't remember anything about that yet, but I'm here and I want to hear more.", true],
    ['No stored context matches this query.', true],
    ['The unified memory holds no record that matches this.', true],
    ["Thank you, I'll remember that.", true],
    ["Thank you for telling me. I'll keep it close.", true],
    ['Noted.', true],
    ['Got it, your horse is Blaze.', true],
    ['Here is what I remember. On 1 December 2026, Sam said: "My horse is called Blaze."', true],
    ['On 1 December 2026, Sam said: "My horse is called Blaze."', true],
    ["Sorry, I can't recall that.", false],
    ['A room at the inn costs three silver a night, and breakfast is one more.', false],
    ['Thanks! By the way, the forge opens at dawn and a new blade costs thirty gold pieces there.', false],
    ['The anvil was my father’s.', false],
  ];
  it.each(table)('%j → %s', (text, nothing) => expect(replyCarriesNothing(text)).toBe(nothing));
});

describe('the memory an exchange leaves', () => {
  const x = (userText: string, ...replies: string[]) => ({
    playerName: 'Sam',
    userText,
    replies: replies.map((text) => ({ speakerName: 'Brom', text })),
  });
  const table: [string, ReturnType<typeof x>, string | null][] = [
    ['a greeting', x('hello there', 'Well met, traveller.'), null],
    ['a greeting answered with a question', x('Hi!', 'Well met! What brings you to my forge today?'), null],
    ['a number', x('1', "I don't remember anything about that yet."), null],
    ['a question answered with nothing', x('What is my cat called?', "I don't remember that."), null],
    [
      'a fact acknowledged: the fact alone',
      x('My kite is called Zephyr.', "Thank you, I'll remember that."),
      'Sam: My kite is called Zephyr.',
    ],
    [
      'a question answered with lore',
      x('How much is a room?', 'Three silver a night, with breakfast.'),
      'Sam: How much is a room?\nBrom: Three silver a night, with breakfast.',
    ],
    [
      'a greeting answered with lore',
      x('hi', 'The road north has been flooded since Tuesday, take the ferry.'),
      'Brom: The road north has been flooded since Tuesday, take the ferry.',
    ],
    [
      'a recap is not stored',
      x('What is my kite called?', 'Here is what I remember. Sam said: "My kite is called Zephyr."'),
      null,
    ],
  ];
  it.each(table)('%s', (_, exchange, content) => expect(exchangeContent(exchange)).toBe(content));
  it('is cut to its maximum', () =>
    expect(exchangeContent(x(`My story is ${'long '.repeat(50)}`), 20)).toHaveLength(20));
});

describe('near-duplicates', () => {
  const table: [string, string, boolean][] = [
    ['My horse is called Blaze.', 'my horse is called blaze!', true],
    [
      'Sam: My horse is called Blaze and he is twelve.',
      "Sam: My horse is called Blaze and he's twelve.",
      true,
    ],
    ['The forge opens at dawn.', 'The forge opens at dawn.', true],
    ['My horse is called Blaze.', 'My horse is called Storm.', false],
    ['My horse is called Blaze.', 'My horse is not called Blaze.', false],
    ['I am 31 years old and I live in Lisbon.', 'I am 32 years old and I live in Lisbon.', false],
    ['Blaze', 'Storm', false],
    [`${'word '.repeat(45)}one`, `${'word '.repeat(45)}two`, false],
  ];
  it.each(table)('%j ~ %j → %s', (a, b, dup) => {
    expect(nearDuplicateOf(b)(a)).toBe(dup);
    expect(nearDuplicateOf(a)(b)).toBe(dup);
  });
});

describe('one-value facts ("my X is Y" forms)', () => {
  const table: [string, { key: string; value: string }[]][] = [
    ['My horse is called Blaze.', [{ key: 'horse#name', value: 'blaze' }]],
    ['My horse is named Storm, he is fast.', [{ key: 'horse#name', value: 'storm' }]],
    ['My horse is called Storm now that he is older.', [{ key: 'horse#name', value: 'storm' }]],
    ['My boat is called Black Beauty of Leith.', [{ key: 'boat#name', value: 'black beauty of leith' }]],
    ["My kite's name is Zephyr and I fly it on Sundays.", [{ key: 'kite#name', value: 'zephyr' }]],
    ['The name of my boat is Marlin.', [{ key: 'boat#name', value: 'marlin' }]],
    ['My favourite colour is teal.', [{ key: 'favourite colour#is', value: 'teal' }]],
    ['My favorite colour is green.', [{ key: 'favourite colour#is', value: 'green' }]],
    ['My dentist is Dr Okafor.', [{ key: 'dentist#is', value: 'dr okafor' }]],
    ['My horse is brown.', []],
    ['My horse is not called Blaze.', []],
    [
      'My favourite fruits are mango, papaya and lychee.',
      [{ key: 'favourite fruits#are', value: 'mango papaya and lychee' }],
    ],
    ['I live in Lisbon, near the harbour.', [{ key: 'home#in', value: 'lisbon' }]],
    ['These days I live in Porto.', [{ key: 'home#in', value: 'porto' }]],
    ['I work as a nurse.', [{ key: 'work#as', value: 'nurse' }]],
    ['What is my horse called?', []],
    ['I have a dog called Rex.', []],
  ];
  it.each(table)('%j', (text, facts) => expect(statedFacts(text)).toEqual(facts));
});

describe('superseding, offline', () => {
  const stored = [
    { id: 1, content: 'Sam: My horse is called Blaze.' },
    { id: 2, content: 'Sam: My horse is called Blaze. My dog is called Rex.' },
    { id: 3, content: 'Sam: My cat is called Tom.' },
    { id: 4, content: 'Sam: I live in Lisbon.\nBrom: Lisbon has fine harbours.' },
    { id: 5, content: 'Sam: My horse is called Storm.' },
    { id: 6, content: 'Ann: My horse is called Blaze.' },
  ];
  const table: [string, string, ReturnType<typeof offlineSupersessions>][] = [
    [
      'a new name for the horse',
      'Sam: My horse is called Storm.',
      [
        { id: 1, remainder: null },
        { id: 2, remainder: 'Sam: My dog is called Rex.' },
      ],
    ],
    [
      'a move: nothing of the player is left, no remainder',
      'Sam: I live in Porto.',
      [{ id: 4, remainder: null }],
    ],
    ['the same value supersedes nothing', 'Sam: My cat is called Tom.', []],
    ['no one-value fact', 'Sam: I like horses.', []],
  ];
  it.each(table)('%s', (_, content, out) =>
    expect(offlineSupersessions(content, 'Sam', stored)).toEqual(out),
  );
});
