// Intent analysis for a context with no state machine and no protocol (contract "Suggestions"):
// keyword rules first; the structured model call's prompt and the parsing of its answer; the
// questions ASK_QUESTIONS answers with. Pure.
import { z } from 'zod';
import type { Intent } from './suggestions.triggers.rules.js';

export interface IntentResult {
  intent: Intent;
  confidence: number;
}

/** The workflow protocol each intent suggests. */
export const INTENT_PROTOCOL: Record<Exclude<Intent, 'none'>, string> = {
  bug: 'triage_support_v1',
  development: 'observer_onboarding_v1',
};

export const protocolOfIntent = (intent: Intent): string | null =>
  intent === 'none' ? null : INTENT_PROTOCOL[intent];

const KEYWORDS: [Exclude<Intent, 'none'>, string[]][] = [
  ['bug', ['bug', 'fix', 'error', 'crash', 'broken', 'failing', 'regression']],
  ['development', ['build', 'implement', 'code', 'feature', 'docs', 'document', 'refactor', 'api']],
];
const KEYWORD_CONFIDENCE = 0.7;
const patterns = KEYWORDS.map(
  ([intent, words]) =>
    [intent, new RegExp(`\\b(?:${words.join('|')})(?:s|es|ed|ing|ation|ations)?\\b`, 'i')] as const,
);

/** The keyword rules: a bug word first, then a development word (whole words, with their common
 * endings: "fixed", "crashes", "documentation"); null when no word matches. */
export function keywordIntent(message: string): IntentResult | null {
  for (const [intent, re] of patterns)
    if (re.test(message)) return { intent, confidence: KEYWORD_CONFIDENCE };
  return null;
}

/** The structured call's request (a remote model, and no keyword hit). */
export function intentPrompt(message: string): { system: string; user: string } {
  return {
    system: [
      'You classify what a user wants to do from one message.',
      '"development": building, implementing, documenting or refactoring something.',
      '"bug": fixing an error, a crash, a failure or a regression.',
      '"none": anything else.',
      'Reply with JSON only, exactly of this form: {"intent":"none|development|bug","confidence":<0 to 1>}',
    ].join('\n'),
    user: message.slice(0, 4000),
  };
}

const answerSchema = z.object({
  intent: z.enum(['none', 'development', 'bug']),
  confidence: z.number().min(0).max(1),
});

/** The model's answer, or none when it does not follow the format. */
export function parseIntentAnswer(text: string): IntentResult {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (!json) return { intent: 'none', confidence: 0 };
  try {
    const parsed = answerSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : { intent: 'none', confidence: 0 };
  } catch {
    return { intent: 'none', confidence: 0 };
  }
}

/** What ASK_QUESTIONS answers before a protocol is chosen. */
export function questionsFor(protocolId: string): string[] {
  return protocolId === INTENT_PROTOCOL.bug
    ? [
        'What happens, and what did you expect instead?',
        'How can it be reproduced?',
        'Since when does it happen, and what changed then?',
      ]
    : [
        'What should be built, and for whom?',
        'What does done look like (tests, a demo, documentation)?',
        'Which parts exist already?',
      ];
}
