-- findInstance
select "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at" from "workflow_instances" where "id" = $1;
-- parameters: ["00000000-0000-4000-8000-000000000001"]

-- findInstanceForUpdate
select "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at" from "workflow_instances" where "id" = $1 for update;
-- parameters: ["00000000-0000-4000-8000-000000000001"]

-- findInstanceForShare
select "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at" from "workflow_instances" where "id" = $1 for share;
-- parameters: ["00000000-0000-4000-8000-000000000001"]

-- listInstances
select "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at" from "workflow_instances" where "created_by_user_id" = $1 and "state" = $2 and "archived_at" is null order by "created_at" desc, "id" desc limit $3 offset $4;
-- parameters: [7,"triage",50,0]

-- listInstances
select count(*) as "n" from "workflow_instances" where "created_by_user_id" = $1 and "state" = $2 and "archived_at" is null;
-- parameters: [7,"triage"]

-- enterState
update "workflow_instances" set "state" = $1, "state_entered_at" = now(), "updated_by_user_id" = $2, "updated_at" = now(), "version" = "version" + $3, "state_visit" = "state_visit" + $4 where "id" = $5 returning "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at";
-- parameters: ["execution",7,1,1,"00000000-0000-4000-8000-000000000001"]

-- enterTerminalState
update "workflow_instances" set "state" = $1, "state_entered_at" = now(), "updated_by_user_id" = $2, "archived_at" = now(), "updated_at" = now(), "version" = "version" + $3, "state_visit" = "state_visit" + $4 where "id" = $5 returning "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at";
-- parameters: ["completed",7,1,1,"00000000-0000-4000-8000-000000000001"]

-- restoreState
update "workflow_instances" set "state" = $1, "state_visit" = $2, "state_entered_at" = now(), "updated_by_user_id" = $3, "updated_at" = now(), "version" = "version" + $4 where "id" = $5 returning "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at";
-- parameters: ["triage",2,7,1,"00000000-0000-4000-8000-000000000001"]

-- setActiveRun
update "workflow_instances" set "active_run_id" = $1 where "id" = $2 returning "id", "machine_id", "protocol_id", "state", "context", "channel_id", "guild_id", "created_by_user_id", "updated_by_user_id", "version", "state_visit", "state_entered_at", "registry_instance_id", "active_run_id", "archived_at", "created_at";
-- parameters: ["00000000-0000-4000-8000-000000000002","00000000-0000-4000-8000-000000000001"]

-- insertApproval
insert into "workflow_approvals" ("id", "instance_id", "state", "state_visit", "approved_by_user_id", "approved_by_name", "note") values ($1, $2, $3, $4, $5, $6, $7) returning "id", "instance_id", "state", "state_visit", "approved_by_user_id", "approved_by_name", "note", "created_at";
-- parameters: ["00000000-0000-4000-8000-000000000002","00000000-0000-4000-8000-000000000001","triage",2,7,"Grace",null]

-- countApprovals
select "instance_id", "state", "state_visit", count(*) as "n" from "workflow_approvals" where "instance_id" in ($1) group by "instance_id", "state", "state_visit";
-- parameters: ["00000000-0000-4000-8000-000000000001"]

-- countPendingArtifacts
select count(*) as "n" from "workflow_artifacts" where "instance_id" = $1 and "review_status" = $2;
-- parameters: ["00000000-0000-4000-8000-000000000001","pending"]

-- statesOf
select "id", "state", "archived_at" from "workflow_instances" where (id::text = any($1::text[]) or "registry_instance_id" = any($2::int8[]));
-- parameters: [["00000000-0000-4000-8000-000000000001"],[3]]
