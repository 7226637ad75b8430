-- insertSession
insert into "persona_sessions" ("id", "user_id", "observer_id", "persona", "conversation_id") values ($1, $2, $3, $4, $5) returning "id", "user_id", "observer_id", "persona", "conversation_id", "created_at", "last_active_at";
-- parameters: ["00000000-0000-4000-8000-000000000001",7,3,"Sister",4]

-- touchSessionByPersona
update "persona_sessions" set "last_active_at" = now() where "user_id" = $1 and "observer_id" = $2 and "persona" = $3 returning "id", "user_id", "observer_id", "persona", "conversation_id", "created_at", "last_active_at";
-- parameters: [7,3,"Sister"]

-- touchSessionById
update "persona_sessions" set "last_active_at" = now() where "user_id" = $1 and "id" = $2 returning "id", "user_id", "observer_id", "persona", "conversation_id", "created_at", "last_active_at";
-- parameters: [7,"00000000-0000-4000-8000-000000000001"]

-- findSession
select "id", "user_id", "observer_id", "persona", "conversation_id", "created_at", "last_active_at" from "persona_sessions" where "id" = $1 and "user_id" = $2;
-- parameters: ["00000000-0000-4000-8000-000000000001",7]

-- listSessions
select "id", "user_id", "observer_id", "persona", "conversation_id", "created_at", "last_active_at" from "persona_sessions" where "user_id" = $1 and "observer_id" = $2 order by "last_active_at" desc, "id";
-- parameters: [7,3]
