import { beforeAll, describe, expect, it } from 'vitest';
import { offlineAnswer, type AnswerContext } from './offline-answer.js';
import { loadWordSimilarity } from './words.js';

const at = '2026-11-26T10:00:00.000Z';
const told = (content: string) => ({ content, createdAt: at });

describe('the offline answer', () => {
  let ctx: AnswerContext;
  beforeAll(async () => {
    ctx = { words: await loadWordSimilarity(), speakerName: 'Assistant' };
  });

  const memories = [
    told("Ada: What is the name of my kite?\nAssistant: I don't remember anything about that yet."),
    told('Ada: My kite is called Skye.\nAssistant: Noted, Skye it is.'),
    told('Ada: My sister lives in Lisbon and works as a nurse.'),
    told('The harbour of Lumen closes at dusk.'),
  ];

  it('quotes the statement that answers, with when and by whom it was said', () => {
    expect(offlineAnswer('What is the name of my kite?', memories, 'PUBLIC', ctx)).toBe(
      'Here is what I remember. On 26 November 2026, Ada said: "My kite is called Skye."',
    );
    expect(offlineAnswer('Where does my sister live?', memories, 'NEUTRAL', ctx)).toBe(
      'On 26 November 2026, Ada said: "My sister lives in Lisbon and works as a nurse."',
    );
    expect(offlineAnswer('When does the harbour close?', memories, 'TECH', ctx)).toBe(
      'Relevant context: On 26 November 2026, I noted: "The harbour of Lumen closes at dusk."',
    );
  });

  it('matches a word in another inflection, never a different thing of the same kind', () => {
    expect(
      offlineAnswer('What did I paint?', [told('Ada: I painted the harbour at dawn.')], 'NEUTRAL', ctx),
    ).toBe('On 26 November 2026, Ada said: "I painted the harbour at dawn."');
    // "cat" and "horse" are close as word vectors; the horse is no answer about the cat.
    expect(
      offlineAnswer('What is my cat called?', [told('Ada: My horse is called Blaze.')], 'NEUTRAL', ctx),
    ).toBe("I don't remember anything about that.");
  });

  it("never quotes the person's own questions, its own replies, or what does not bear on the question", () => {
    // The kite memories share "name" with the question, which is no reason to quote them.
    expect(offlineAnswer('What is the name of my horse?', memories, 'PUBLIC', ctx)).toBe(
      "I don't remember anything about that yet. Could you tell me?",
    );
    const asked = [told('Ada: What is the name of my kite?\nAssistant: My kite memory is empty.')];
    expect(offlineAnswer('what about my kite?', asked, 'NEUTRAL', ctx)).toBe(
      "I don't remember anything about that.",
    );
    expect(offlineAnswer('Tell me about the weather', memories, 'PRIVATE', ctx)).toBe(
      "I don't remember anything about that yet, but I'm here and I want to hear more.",
    );
  });

  it('takes note of what it is told rather than asked', () => {
    expect(offlineAnswer('My horse is called Blaze.', memories, 'PUBLIC', ctx)).toBe(
      "Thank you, I'll remember that.",
    );
    expect(offlineAnswer('my kite is red', memories, 'TECH', ctx)).toBe('Recorded.');
  });

  it('says it does not remember when nothing was retrieved, in each tone', () => {
    expect(offlineAnswer('anything about dragons?', [], 'TECH', ctx)).toBe(
      'No stored context matches this query.',
    );
    expect(offlineAnswer('anything about dragons?', [], 'SYSTEM', ctx)).toBe(
      'The unified memory holds no record that matches this.',
    );
  });

  it('adds a second statement only when it bears on the question about as much', () => {
    const two = [
      told('Ada: My kite is red.'),
      told('Ada: I fly my kite on Sundays.'),
      told('Ada: I like tea.'),
    ];
    expect(offlineAnswer('Tell me about my kite', two, 'PUBLIC', ctx)).toBe(
      'Here is what I remember. On 26 November 2026, Ada said: "My kite is red." On 26 November 2026, Ada said: "I fly my kite on Sundays."',
    );
  });
});
