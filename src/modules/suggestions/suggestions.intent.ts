// Intent analysis of a message (contract "Suggestions"): the keyword rules; with a remote model
// and no keyword hit, one structured call through the model gateway (at most so many a minute per
// user), whose answer is kept with the context so the same message is never sent twice; offline,
// no intent.
import { createHash } from 'node:crypto';
import * as settings from './suggestions.settings.repository.js';
import {
  intentPrompt,
  keywordIntent,
  parseIntentAnswer,
  type IntentResult,
} from './suggestions.intent.rules.js';
import type { Intent } from './suggestions.triggers.rules.js';
import type { SuggestionsDeps, SuggestionsOptions } from './suggestions.types.js';

const NONE: IntentResult = { intent: 'none', confidence: 0 };

export class IntentAnalysis {
  constructor(
    private readonly deps: Pick<SuggestionsDeps, 'db' | 'log' | 'models' | 'counters'>,
    private readonly options: Pick<SuggestionsOptions, 'intentCallsPerMinute'>,
  ) {}

  async analyse(
    userId: number,
    contextId: string,
    message: string,
    stored: settings.ContextRow | undefined,
  ): Promise<IntentResult> {
    const byKeyword = keywordIntent(message);
    if (byKeyword) return byKeyword;
    if (this.deps.models.offline || message.trim() === '') return NONE;
    const hash = createHash('sha256').update(message).digest('base64url');
    if (stored?.intent_message_hash === hash && stored.intent !== null)
      return { intent: stored.intent as Intent, confidence: stored.intent_confidence ?? 0 };
    // A GET with a new message each time must not become a stream of model calls.
    const calls = await this.deps.counters.hit(`suggestions-intent:${userId}`, 60_000);
    if (calls.count > this.options.intentCallsPerMinute) return NONE;
    let result: IntentResult;
    try {
      const p = intentPrompt(message);
      const r = await this.deps.models.chat({
        purpose: 'suggestions.intent',
        system: p.system,
        messages: [{ role: 'user', content: p.user }],
        temperature: 0,
        maxOutputTokens: 60,
      });
      result = parseIntentAnswer(r.text);
    } catch (err) {
      // A failed call suggests nothing this time; the next pass asks again.
      this.deps.log.warn({ err, contextId }, 'intent analysis call failed');
      return NONE;
    }
    await settings.upsertContext(this.deps.db, userId, contextId, {
      intent_message_hash: hash,
      intent: result.intent,
      intent_confidence: result.confidence,
    });
    return result;
  }
}
