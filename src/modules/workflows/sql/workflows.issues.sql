-- insertIssue
insert into "workflow_issues" ("id", "instance_id", "state", "state_visit", "artifact_ids", "title", "body") values ($1, $2, $3, $4, $5, $6, $7);
-- parameters: ["00000000-0000-4000-8000-000000000002","00000000-0000-4000-8000-000000000001","integration",1,["00000000-0000-4000-8000-000000000004"],"Artifacts of workflow","body"]

-- findIssue
select * from "workflow_issues" where "id" = $1;
-- parameters: ["00000000-0000-4000-8000-000000000002"]

-- recordAttempt
update "workflow_issues" set "status" = $1, "attempts" = attempts + 1, "number" = $2, "url" = $3, "last_error" = $4, "updated_at" = now() where "id" = $5 and "status" = $6 returning "id";
-- parameters: ["created",42,"u",null,"00000000-0000-4000-8000-000000000002","pending"]

-- setArtifactsIssue
update "workflow_artifacts" set "issue" = $1 where "id" = any($2::uuid[]);
-- parameters: [{"number":42,"url":"u"},["00000000-0000-4000-8000-000000000004"]]
