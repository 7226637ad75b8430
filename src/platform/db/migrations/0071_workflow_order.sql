-- Tasks and artifacts keep the order they were created in: rows inserted by one statement share
-- their created_at, so an identity column breaks the tie.
alter table workflow_tasks add column seq bigint generated always as identity;
alter table workflow_artifacts add column seq bigint generated always as identity;
create index workflow_tasks_instance_seq on workflow_tasks (instance_id, seq);
create index workflow_artifacts_instance_seq on workflow_artifacts (instance_id, seq);
drop index workflow_tasks_instance;
drop index workflow_artifacts_instance;
