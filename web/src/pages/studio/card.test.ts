import { describe, expect, it } from 'vitest';
import { bodyOf, formOf, matches, toolsSummary, type Character } from './card';

const mira: Character = {
  id: 7,
  name: 'Mira',
  description: 'The blacksmith of the harbour town.',
  personaType: 'crafter',
  metadata: { specialties: ['writing'] },
  isAssistant: false,
  personality: 'Gruff, fair.',
  speakingStyle: 'Short sentences.',
  goals: ['Forge a blade', 'Find an apprentice'],
  playerMemory: 'shared',
  tools: {
    modifyInventory: { items: [3, 1], maxQuantity: 2, dailyQuantity: 6 },
    modifyCurrency: { maxAmount: 5, dailyAmount: 20 },
  },
};

describe('the character card form', () => {
  it('round-trips a character, keeping what the card does not edit', () => {
    const r = bodyOf(formOf(mira), mira);
    expect(r).toEqual({
      body: {
        name: 'Mira',
        description: mira.description,
        personaType: 'crafter',
        metadata: { specialties: ['writing'] },
        personality: 'Gruff, fair.',
        speakingStyle: 'Short sentences.',
        goals: ['Forge a blade', 'Find an apprentice'],
        playerMemory: 'shared',
        tools: {
          modifyInventory: { items: [1, 3], maxQuantity: 2, dailyQuantity: 6 },
          modifyCurrency: { maxAmount: 5, dailyAmount: 20 },
        },
      },
    });
  });

  it('starts a new character with no tools, its own player memory, and sends no tools', () => {
    const f = formOf();
    expect(f).toMatchObject({
      name: '',
      playerMemory: 'own',
      inventory: { on: false },
      currency: { on: false },
    });
    const r = bodyOf({ ...f, name: ' Tobin ', goals: ' sail \n\n fish ' });
    expect(r).toEqual({
      body: {
        name: 'Tobin',
        description: '',
        personality: '',
        speakingStyle: '',
        goals: ['sail', 'fish'],
        playerMemory: 'own',
      },
    });
  });

  it('reads `tools: null` as a character without tools', () => {
    expect(formOf({ ...mira, tools: null })).toMatchObject({
      inventory: { on: false },
      currency: { on: false },
    });
  });

  it.each([
    [{ name: '' }, 'A character needs a name.'],
    [
      { inventory: { on: true, all: true, items: [], maxQuantity: '0', dailyQuantity: '5' } },
      'Items at a time must be a whole number of 1 or more.',
    ],
    [
      { inventory: { on: true, all: true, items: [], maxQuantity: '2', dailyQuantity: '1.5' } },
      'Items a day must be a whole number of 1 or more.',
    ],
    [
      { inventory: { on: true, all: false, items: [], maxQuantity: '1', dailyQuantity: '1' } },
      'Choose the items the character may give or take, or allow every item.',
    ],
    [
      { inventory: { on: true, all: true, items: [], maxQuantity: '3', dailyQuantity: '2' } },
      'Items a day cannot be fewer than items at a time.',
    ],
    [
      { currency: { on: true, maxAmount: '', dailyAmount: '5' } },
      'Coins at a time must be a whole number of 1 or more.',
    ],
    [
      { currency: { on: true, maxAmount: '9', dailyAmount: '5' } },
      'Coins a day cannot be fewer than coins at a time.',
    ],
  ])('names the mistake of %j', (change, error) => {
    expect(bodyOf({ ...formOf(mira), ...change })).toEqual({ errors: [error] });
  });

  it('allows every item', () => {
    const f = formOf(mira);
    const r = bodyOf({ ...f, inventory: { ...f.inventory, all: true } }, mira);
    expect('body' in r && r.body.tools?.modifyInventory?.items).toBe('all');
  });
});

describe('the character list', () => {
  it.each([
    ['', true],
    ['mira', true],
    ['BLACKSMITH harbour', true],
    ['crafter', true],
    ['mira sailor', false],
    ['tobin', false],
  ])('search %j matches Mira: %s', (q, yes) => {
    expect(matches(mira, q)).toBe(yes);
  });

  it('says what tools a character has', () => {
    const name = (id: number) => (id === 1 ? 'Sword' : `item ${id}`);
    expect(toolsSummary(mira.tools, name)).toBe(
      'gives or takes item 3, Sword (2 at a time, 6 a day); gives or takes coins (5 at a time, 20 a day)',
    );
    expect(toolsSummary({ modifyInventory: { items: 'all', maxQuantity: 1, dailyQuantity: 1 } }, name)).toBe(
      'gives or takes any item (1 at a time, 1 a day)',
    );
    expect(toolsSummary(undefined, name)).toBe('no tools');
  });
});
