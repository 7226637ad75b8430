-- defaultConversation
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at" from "conversations" where "user_id" = $1 and "is_default" = $2;
-- parameters: [7,true]

-- defaultConversation
insert into "conversations" ("user_id", "title", "npc_user_ids", "is_default") values ($1, $2, $3, $4) on conflict ("user_id") where is_default do nothing;
-- parameters: [7,"",[],true]

-- defaultConversation
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at" from "conversations" where "user_id" = $1 and "is_default" = $2;
-- parameters: [7,true]

-- findConversation
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at" from "conversations" where "id" = $1;
-- parameters: [4]

-- findConversations
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at" from "conversations" where "id" = any($1::int8[]);
-- parameters: [[4,5]]

-- findDefaultConversations
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at" from "conversations" where "user_id" = any($1::int8[]) and "is_default" = $2;
-- parameters: [[7,8],true]

-- directConversation
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at" from "conversations" where "user_id" = $1 and "direct_npc_user_id" = $2;
-- parameters: [7,9]

-- directConversation
insert into "conversations" ("user_id", "title", "npc_user_ids", "direct_npc_user_id") values ($1, $2, $3, $4) on conflict ("user_id", "direct_npc_user_id") where direct_npc_user_id is not null do nothing;
-- parameters: [7,"",[9],9]

-- directConversation
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at" from "conversations" where "user_id" = $1 and "direct_npc_user_id" = $2;
-- parameters: [7,9]

-- conversationsWith

    select id from conversations
    where user_id = $1 and (npc_user_ids @> $2::int8[] );
-- parameters: [7,[9]]

-- conversationsWith (shared pool)

    select id from conversations
    where user_id = $1 and (npc_user_ids @> $2::int8[] or (cardinality(npc_user_ids) > 0 and npc_user_ids <@ $3::int8[]));
-- parameters: [7,[9,10],[9,10,11]]

-- findByClientMessageId
select "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at" from "chat_messages" where "user_id" = $1 and "client_message_id" = $2;
-- parameters: [7,"c-1"]

-- insertMessageWithHistory
with "touched" as (update "conversations" set "updated_at" = now() where "id" = $1) insert into "chat_messages" ("conversation_id", "user_id", "role", "text", "npc_user_id", "client_message_id", "status", "reply_to_id", "metadata") values ($2, $3, $4, $5, $6, $7, $8, $9, $10) returning "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at", nextval(pg_get_serial_sequence('chat_messages', 'id')) as "reply_id", (select coalesce(json_agg(h order by h.id), '[]'::json) from (select "m"."id", "m"."conversation_id", "m"."user_id", "m"."role", "m"."npc_user_id", "m"."text", "m"."client_message_id", "m"."status", "m"."reply_to_id", "m"."metadata", "m"."created_at" from chat_messages m where m.conversation_id = $11 order by m.id desc limit $12) h) as "history";
-- parameters: [4,4,7,"user","Hello",null,"c-1","received",null,{},4,12]

-- insertMessage
with "touched" as (update "conversations" set "updated_at" = now() where "id" = $1) insert into "chat_messages" ("conversation_id", "user_id", "role", "text", "npc_user_id", "client_message_id", "status", "reply_to_id", "metadata") values ($2, $3, $4, $5, $6, $7, $8, $9, $10) returning "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at";
-- parameters: [4,4,7,"user","Hello",9,"c-1","received",null,{}]

-- reserveMessageId
select nextval(pg_get_serial_sequence('chat_messages', 'id')) as id;
-- parameters: []

-- history
select "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at" from "chat_messages" where "conversation_id" = $1 and "id" < $2 order by "id" desc limit $3;
-- parameters: [4,100,12]

-- storeReplies
with "answered" as (update "chat_messages" set "status" = $1 where "id" = $2 and (select set_config('synchronous_commit', 'off', true)) = 'off') insert into "chat_messages" ("id", "conversation_id", "user_id", "role", "text", "npc_user_id", "client_message_id", "status", "reply_to_id", "metadata") values ($3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at";
-- parameters: ["answered",100,101,4,7,"assistant","Hi",null,null,"answered",100,{}]

-- repliesTo
select "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at" from "chat_messages" where "reply_to_id" = $1 order by "id";
-- parameters: [100]

-- setMessageStatus
update "chat_messages" set "status" = $1 where "id" = $2;
-- parameters: ["failed",100]

-- insertConversation
insert into "conversations" ("user_id", "title", "npc_user_ids", "is_default") values ($1, $2, $3, $4) returning "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at";
-- parameters: [7,"tavern",[9,10],false]

-- listConversations
select "id", "user_id", "title", "npc_user_ids", "is_default", "direct_npc_user_id", "created_at", "updated_at" from "conversations" where "user_id" = $1 order by "updated_at" desc, "id" desc limit $2 offset $3;
-- parameters: [7,50,0]

-- listConversations
select count(*) as "n" from "conversations" where "user_id" = $1;
-- parameters: [7]

-- deleteConversation
delete from "conversations" where "id" = $1 and "user_id" = $2 returning "is_default";
-- parameters: [4,7]

-- lastAssistantMessage
select "id", "conversation_id", "user_id", "role", "npc_user_id", "text", "client_message_id", "status", "reply_to_id", "metadata", "created_at" from "chat_messages" where "conversation_id" = $1 and "role" = $2 order by "id" desc limit $3;
-- parameters: [4,"assistant",1]

-- countConversations
select count(*) as "n" from "conversations";
-- parameters: []

-- countMessages
select count(*) as "total", count(*) filter (where created_at > now() - make_interval(hours => $1)) as "recent", count(*) filter (where status = 'failed') as "failed" from "chat_messages";
-- parameters: [24]
