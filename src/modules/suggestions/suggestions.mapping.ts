// A stored suggestion as the API shows it: its actions' safety class and autoExecutable flag
// follow from their type and the caller's config at the time it is shown.
import {
  autoExecutableFlag,
  SAFETY_OF,
  type AutoExecutionConfig,
  type Ordered,
} from './suggestions.rules.js';
import type { SuggestionRow } from './suggestions.repository.js';
import type { Suggestion } from './suggestions.schemas.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toSuggestion(r: SuggestionRow, config: AutoExecutionConfig): Suggestion {
  return {
    id: r.id,
    type: r.type,
    message: r.message,
    confidence: r.confidence,
    metadata: r.metadata,
    actions: r.actions.map((a) => ({
      type: a.type,
      label: a.label,
      safety: SAFETY_OF[a.type],
      autoExecutable: autoExecutableFlag(a.type, config),
      params: a.params,
    })),
    timestamp: r.created_at.toISOString(),
    ttl: r.ttl,
    priority: r.priority,
    context: {
      contextId: r.context_id,
      userId: r.user_id,
      ...(r.instance_id !== null ? { instanceId: r.instance_id } : {}),
      ...(r.channel_id !== null ? { channelId: r.channel_id } : {}),
      ...(r.protocol_id !== null ? { protocolId: r.protocol_id } : {}),
      ...(r.state !== null ? { state: r.state } : {}),
    },
    status: r.status,
    expiredReason: r.expired_reason,
    actionType: r.action_type,
    autoExecuted: r.auto_executed,
    responseTimeMs: r.response_time_ms,
    executedAt: iso(r.executed_at),
    executionTimeMs: r.execution_time_ms,
    error: r.error,
    undoneAt: iso(r.undone_at),
  };
}

/** A stored suggestion as the ordering sees it. */
export const toOrdered = (r: SuggestionRow): Ordered => ({
  id: r.id,
  priority: r.priority,
  confidence: r.confidence,
  timestamp: r.created_at,
});
