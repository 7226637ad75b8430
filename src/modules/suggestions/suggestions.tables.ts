import type { ColumnType, Generated } from 'kysely';
import type { Json, UpdatedAt } from '../../platform/db/schema.js';
import type { ActionType, ExpiredReason, SuggestionStatus, SuggestionType } from './suggestions.rules.js';
import type { StoredAction } from './suggestions.triggers.rules.js';

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** What an executed transition changed, for its undo. */
export interface TransitionOutcome {
  from: string;
  visit: number;
  version: number;
}

export interface SuggestionsTable {
  id: Generated<string>;
  user_id: number;
  context_id: string;
  key: string;
  type: SuggestionType;
  message: string;
  confidence: number;
  priority: number;
  metadata: Json;
  actions: Json<StoredAction[]>;
  ttl: number;
  instance_id: string | null;
  channel_id: string | null;
  protocol_id: string | null;
  state: string | null;
  state_visit: number | null;
  status: ColumnType<SuggestionStatus, SuggestionStatus | undefined, SuggestionStatus>;
  expired_reason: Nullable<ExpiredReason>;
  action_type: Nullable<ActionType>;
  auto_executed: Generated<boolean>;
  response_time_ms: Nullable<number>;
  executed_at: Nullable<Date>;
  execution_time_ms: Nullable<number>;
  error: Nullable<Record<string, unknown>>;
  undone_at: Nullable<Date>;
  outcome: Nullable<TransitionOutcome>;
  claimed_until: Nullable<Date>;
  created_at: Date;
  updated_at: UpdatedAt;
}

export interface SuggestionConfigsTable {
  user_id: number;
  auto_run_orchestrator: boolean;
  auto_transition_on_guard: boolean;
  auto_suggest_next_step: boolean;
  require_confirmation_for: Json<ActionType[]>;
  never_auto_execute: Json<ActionType[]>;
  undo_window_minutes: number;
  updated_at: UpdatedAt;
}

export interface SuggestionContextsTable {
  user_id: number;
  context_id: string;
  protocol_id: Nullable<string>;
  instance_id: Nullable<string>;
  intent_message_hash: Nullable<string>;
  intent: Nullable<string>;
  intent_confidence: Nullable<number>;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    suggestions: SuggestionsTable;
    suggestion_configs: SuggestionConfigsTable;
    suggestion_contexts: SuggestionContextsTable;
  }
}
