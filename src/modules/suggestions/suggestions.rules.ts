// Pure rules of the suggestions (spec "Suggestion", "States and transitions" → Suggestions; contract
// "Suggestions"): the safety class of each action type, the auto-execution decision in the spec's
// four-step order, the per-user config and its defaults, the status machine, ttl expiry and the
// order in which suggestions are returned. No I/O.

export const SUGGESTION_TYPES = [
  'BREAK_DOWN_TASKS',
  'RUN_ORCHESTRATOR',
  'VIEW_ARTIFACTS',
  'TRANSITION_STATE',
  'APPROVE_GUARD',
  'ATTACH_EVIDENCE',
  'REVIEW_ARTIFACT',
  'SELECT_PROTOCOL',
  'CREATE_STATE_MACHINE',
  'GENERATE_DOCUMENTATION',
  'SUGGEST_NEXT_STEP',
  'NONE',
] as const;
export type SuggestionType = (typeof SUGGESTION_TYPES)[number];

export const ACTION_TYPES = [
  'EXECUTE',
  'VIEW',
  'APPROVE',
  'CANCEL',
  'SHOW_STATUS',
  'ASK_QUESTIONS',
  'TRANSITION',
  'ATTACH_EVIDENCE',
  'REVIEW',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const SAFETIES = ['SAFE', 'REQUIRES_CONFIRMATION', 'NEVER_AUTO'] as const;
export type Safety = (typeof SAFETIES)[number];

/** The spec's safety classes per action type. */
export const SAFETY_OF: Record<ActionType, Safety> = {
  VIEW: 'SAFE',
  SHOW_STATUS: 'SAFE',
  APPROVE: 'REQUIRES_CONFIRMATION',
  TRANSITION: 'REQUIRES_CONFIRMATION',
  REVIEW: 'REQUIRES_CONFIRMATION',
  ASK_QUESTIONS: 'REQUIRES_CONFIRMATION',
  EXECUTE: 'NEVER_AUTO',
  CANCEL: 'NEVER_AUTO',
  ATTACH_EVIDENCE: 'NEVER_AUTO',
};

/** The spec's AutoExecutionConfig, per user. */
export interface AutoExecutionConfig {
  autoRunOrchestrator: boolean;
  autoTransitionOnGuard: boolean;
  autoSuggestNextStep: boolean;
  requireConfirmationFor: ActionType[];
  neverAutoExecute: ActionType[];
  undoWindowMinutes: number;
}

export const DEFAULT_CONFIG: AutoExecutionConfig = {
  autoRunOrchestrator: true,
  autoTransitionOnGuard: false,
  autoSuggestNextStep: true,
  requireConfirmationFor: [],
  neverAutoExecute: [],
  undoWindowMinutes: 5,
};

/** An action's own `autoExecutable` flag: true for VIEW and SHOW_STATUS, for TRANSITION when the
 * config's `autoTransitionOnGuard` is on, else false. */
export function autoExecutableFlag(type: ActionType, config: AutoExecutionConfig): boolean {
  if (type === 'VIEW' || type === 'SHOW_STATUS') return true;
  if (type === 'TRANSITION') return config.autoTransitionOnGuard;
  return false;
}

/** Whether an action runs without asking, in the spec's order: (1) listed in `neverAutoExecute`:
 * no; (2) its safety class is NEVER_AUTO: no (REQUIRES_CONFIRMATION does not block by itself: the
 * contract's resolution); (3) listed in `requireConfirmationFor`: no; (4) its `autoExecutable`
 * flag. */
export function autoExecute(
  action: { type: ActionType; safety: Safety; autoExecutable: boolean },
  config: AutoExecutionConfig,
): boolean {
  if (config.neverAutoExecute.includes(action.type)) return false;
  if (action.safety === 'NEVER_AUTO') return false;
  if (config.requireConfirmationFor.includes(action.type)) return false;
  return action.autoExecutable;
}

/** The config's `decisions`: each action type's decision with its default flag. */
export function decisions(config: AutoExecutionConfig): Record<ActionType, boolean> {
  return Object.fromEntries(
    ACTION_TYPES.map((type) => [
      type,
      autoExecute(
        { type, safety: SAFETY_OF[type], autoExecutable: autoExecutableFlag(type, config) },
        config,
      ),
    ]),
  ) as Record<ActionType, boolean>;
}

// ---- status machine ----------------------------------------------------------------------------

export const STATUSES = ['active', 'accepted', 'declined', 'expired', 'executed'] as const;
export type SuggestionStatus = (typeof STATUSES)[number];
export const EXPIRED_REASONS = ['trigger', 'ttl', 'cleared'] as const;
export type ExpiredReason = (typeof EXPIRED_REASONS)[number];

/** Answers a user gives (PUT `status`): only an active suggestion is accepted or declined. */
export const RESPONSE_MOVES: Record<SuggestionStatus, readonly SuggestionStatus[]> = {
  active: ['accepted', 'declined'],
  accepted: [],
  declined: [],
  expired: [],
  executed: [],
};

export type ResponseDecision =
  { kind: 'move' } | { kind: 'stay' } | { kind: 'invalid'; allowed: SuggestionStatus[] };

/** A user's answer: a move the machine has, staying put (no move), or refused. */
export function decideResponse(from: SuggestionStatus, to: SuggestionStatus): ResponseDecision {
  if (from === to) return { kind: 'stay' };
  return RESPONSE_MOVES[from].includes(to)
    ? { kind: 'move' }
    : { kind: 'invalid', allowed: [...RESPONSE_MOVES[from]] };
}

/** Open suggestions: still executable, cleared by a clear, and unique per key. */
export const OPEN_STATUSES = ['active', 'accepted'] as const satisfies readonly SuggestionStatus[];
export const isOpen = (s: SuggestionStatus): boolean => s === 'active' || s === 'accepted';

/** A key whose suggestion ended this way is not made again in its context until the instance
 * moves on (its key then differs): declined, cleared, executed (undone ones included). */
export function blocksKey(r: { status: SuggestionStatus; expiredReason: ExpiredReason | null }): boolean {
  return r.status === 'declined' || r.status === 'executed' || r.expiredReason === 'cleared';
}

// ---- ttl and order -----------------------------------------------------------------------------

export const DEFAULT_TTL_SECONDS = 3600;
export const MAX_RETURNED = 10;
export const DEFAULT_CONFIDENCE = 0.8;

/** Expired when its ttl has elapsed since its timestamp. */
export const ttlElapsed = (timestamp: Date, ttlSeconds: number, now: Date): boolean =>
  now.getTime() - timestamp.getTime() >= ttlSeconds * 1000;

export interface Ordered {
  id: string;
  priority: number;
  confidence: number;
  timestamp: Date;
}

/** Priority, then confidence (both highest first), then timestamp (newest first), then id. */
export function compareSuggestions(a: Ordered, b: Ordered): number {
  return (
    b.priority - a.priority ||
    b.confidence - a.confidence ||
    b.timestamp.getTime() - a.timestamp.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** What GET returns: the active ones in order, at most ten. */
export function topSuggestions<T extends Ordered>(rows: T[]): T[] {
  return [...rows].sort(compareSuggestions).slice(0, MAX_RETURNED);
}

// ---- context ids -------------------------------------------------------------------------------

export type ContextRef =
  | { kind: 'instance'; contextId: string; instanceId: string }
  | { kind: 'conversation'; contextId: string; conversationId: number }
  | { kind: 'channel'; contextId: string; channelId: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a context id names: a workflow instance (a UUID), `conversation:<id>`, else a
 * chat-platform channel. Null: not a context id (`config`, `history`, a bad conversation id). */
export function parseContextId(contextId: string): ContextRef | null {
  if (contextId === 'config' || contextId === 'history') return null;
  if (UUID.test(contextId)) {
    const id = contextId.toLowerCase();
    return { kind: 'instance', contextId: id, instanceId: id };
  }
  if (contextId.startsWith('conversation:')) {
    const id = contextId.slice('conversation:'.length);
    if (!/^[1-9][0-9]{0,15}$/.test(id)) return null;
    return { kind: 'conversation', contextId, conversationId: Number(id) };
  }
  return { kind: 'channel', contextId, channelId: contextId };
}
