-- contextRows
select "id", "user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "status", "expired_reason", "action_type", "auto_executed", "response_time_ms", "executed_at", "execution_time_ms", "error", "undone_at", "outcome", "claimed_until", "created_at" from "suggestions" where "user_id" = $1 and "context_id" = $2 and ("status" in ($3, $4) or key = any($5::text[]));
-- parameters: [7,"chan-1","active","accepted",["A|x|-","B|y|-"]]

-- insertSuggestions
insert into "suggestions" ("user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) on conflict ("user_id", "context_id", "key") where status in ('active', 'accepted') do nothing returning "id", "user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "status", "expired_reason", "action_type", "auto_executed", "response_time_ms", "executed_at", "execution_time_ms", "error", "undone_at", "outcome", "claimed_until", "created_at";
-- parameters: [7,"chan-1","SELECT_PROTOCOL|triage_support_v1|-","SELECT_PROTOCOL","m",0.7,40,{},"[{\"type\":\"CANCEL\",\"label\":\"Dismiss\",\"params\":{}}]",3600,null,"chan-1",null,null,null,"2026-03-01T10:00:00.000Z"]

-- expire
update "suggestions" set "status" = $1, "expired_reason" = $2, "updated_at" = now() where id = any($3::uuid[]) and "status" in ($4) returning "id";
-- parameters: ["expired","ttl",["00000000-0000-4000-8000-000000000001"],"active"]

-- findSuggestion
select "id", "user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "status", "expired_reason", "action_type", "auto_executed", "response_time_ms", "executed_at", "execution_time_ms", "error", "undone_at", "outcome", "claimed_until", "created_at" from "suggestions" where "id" = $1 and "user_id" = $2 and "context_id" = $3;
-- parameters: ["00000000-0000-4000-8000-000000000001",7,"chan-1"]

-- claim
update "suggestions" set "claimed_until" = $1 where "id" = $2 and "status" in ($3, $4) and ("claimed_until" is null or "claimed_until" <= $5) returning "id", "user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "status", "expired_reason", "action_type", "auto_executed", "response_time_ms", "executed_at", "execution_time_ms", "error", "undone_at", "outcome", "claimed_until", "created_at";
-- parameters: ["2026-03-01T10:01:00.000Z","00000000-0000-4000-8000-000000000001","active","accepted","2026-03-01T10:00:00.000Z"]

-- updateSuggestion
update "suggestions" set "status" = $1, "claimed_until" = $2, "updated_at" = now() where "id" = $3 and "status" in ($4) returning "id", "user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "status", "expired_reason", "action_type", "auto_executed", "response_time_ms", "executed_at", "execution_time_ms", "error", "undone_at", "outcome", "claimed_until", "created_at";
-- parameters: ["declined",null,"00000000-0000-4000-8000-000000000001","active"]

-- openIds
select "id" from "suggestions" where "user_id" = $1 and "context_id" = $2 and "status" in ($3, $4);
-- parameters: [7,"chan-1","active","accepted"]

-- history
select "id", "user_id", "context_id", "key", "type", "message", "confidence", "priority", "metadata", "actions", "ttl", "instance_id", "channel_id", "protocol_id", "state", "state_visit", "status", "expired_reason", "action_type", "auto_executed", "response_time_ms", "executed_at", "execution_time_ms", "error", "undone_at", "outcome", "claimed_until", "created_at" from "suggestions" where "user_id" = $1 and "channel_id" = $2 order by "created_at" desc, "id" desc limit $3;
-- parameters: [7,"chan-1",50]

-- findConfig
select "auto_run_orchestrator", "auto_transition_on_guard", "auto_suggest_next_step", "require_confirmation_for", "never_auto_execute", "undo_window_minutes" from "suggestion_configs" where "user_id" = $1;
-- parameters: [7]

-- findContext
select "protocol_id", "instance_id", "intent_message_hash", "intent", "intent_confidence" from "suggestion_contexts" where "user_id" = $1 and "context_id" = $2;
-- parameters: [7,"chan-1"]

-- configAndBoundContexts
select "c"."auto_run_orchestrator", "c"."auto_transition_on_guard", "c"."auto_suggest_next_step", "c"."require_confirmation_for", "c"."never_auto_execute", "c"."undo_window_minutes", "c"."user_id" as "config_user_id", array((select "context_id" from "suggestion_contexts" where "instance_id" = $1 and "user_id" = $2)) as "bound" from (select $3::bigint as user_id) as "u" left join "suggestion_configs" as "c" on "c"."user_id" = "u"."user_id";
-- parameters: ["00000000-0000-4000-8000-000000000001",7,7]
