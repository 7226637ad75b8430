-- insertRun
insert into "workflow_runs" ("id", "instance_id", "trigger", "task_ids", "progress", "created_by_user_id") values ($1, $2, $3, $4, $5, $6) returning "id", "instance_id", "status", "trigger", "task_ids", "progress", "error", "created_at", "finished_at";
-- parameters: ["00000000-0000-4000-8000-000000000002","00000000-0000-4000-8000-000000000001","manual","[]",{"total":0,"completed":0,"failed":0},7]

-- setRunOptions
update "workflow_runs" set "run_tasks" = $1, "concurrency" = $2 where "id" = $3 returning "id", "instance_id", "status", "trigger", "task_ids", "progress", "error", "created_at", "finished_at", "run_tasks", "concurrency", "lease_until", "started_at", "created_by_user_id";
-- parameters: [true,3,"00000000-0000-4000-8000-000000000002"]

-- findActiveRun
select "id", "instance_id", "status", "trigger", "task_ids", "progress", "error", "created_at", "finished_at" from "workflow_runs" where "instance_id" = $1 and "status" in ($2, $3);
-- parameters: ["00000000-0000-4000-8000-000000000001","queued","running"]

-- cancelActiveRuns
update "workflow_runs" set "status" = $1, "finished_at" = now() where "instance_id" = $2 and "status" in ($3, $4) returning "id";
-- parameters: ["canceled","00000000-0000-4000-8000-000000000001","queued","running"]

-- takeRun
update "workflow_runs" set "status" = $1, "lease_until" = now() + make_interval(secs => $2), "started_at" = coalesce(started_at, now()) where "id" = $3 and "status" in ($4, $5) and ("lease_until" is null or "lease_until" < now()) returning "id", "instance_id", "status", "trigger", "task_ids", "progress", "error", "created_at", "finished_at", "run_tasks", "concurrency", "lease_until", "started_at", "created_by_user_id";
-- parameters: ["running",60,"00000000-0000-4000-8000-000000000002","queued","running"]

-- renewLease
update "workflow_runs" set "lease_until" = now() + make_interval(secs => $1) where "id" = $2 and "status" = $3 returning "id";
-- parameters: [60,"00000000-0000-4000-8000-000000000002","running"]

-- releaseLease
update "workflow_runs" set "lease_until" = $1 where "id" = $2 and "status" = $3;
-- parameters: [null,"00000000-0000-4000-8000-000000000002","running"]

-- setRunTasks
update "workflow_runs" set "task_ids" = $1, "progress" = jsonb_set(progress, '{total}', to_jsonb($2::int)) where "id" = $3 returning "id", "instance_id", "status", "trigger", "task_ids", "progress", "error", "created_at", "finished_at", "run_tasks", "concurrency", "lease_until", "started_at", "created_by_user_id";
-- parameters: ["[\"00000000-0000-4000-8000-000000000003\"]",1,"00000000-0000-4000-8000-000000000002"]

-- lockTasksWithClaims
select "t"."id", "t"."instance_id", "t"."title", "t"."description", "t"."status", "t"."specialty", "t"."assigned_persona_id", "t"."assigned_human", "t"."notes", "t"."metadata", "t"."run_count", "t"."created_at", "tr"."status" as "claim_status", "tr"."artifact_id" as "claim_artifact_id" from "workflow_tasks" as "t" left join "workflow_task_runs" as "tr" on "tr"."task_id" = "t"."id" and "tr"."run_id" = $1 where "t"."id" = any($2::uuid[]) order by "t"."id" for update of "t";
-- parameters: ["00000000-0000-4000-8000-000000000002",["00000000-0000-4000-8000-000000000003"]]

-- claimTasks

    with c as (
      select * from unnest(
        $1::uuid[],
        $2::int8[],
        $3::text[],
        $4::jsonb[]
      ) with ordinality as c (task_id, persona_id, summary, metadata, n)
    ), artifact as (
      insert into workflow_artifacts (instance_id, task_id, persona_id, summary, content, metadata)
      select $5::uuid, task_id, persona_id, summary, '', metadata from c order by n
      returning id, task_id, persona_id
    ), claim as (
      insert into workflow_task_runs (run_id, task_id, persona_id, artifact_id)
      select $6::uuid, task_id, persona_id, id from artifact
      on conflict (run_id, task_id) do nothing
      returning task_id, artifact_id
    )
    update workflow_tasks as t
    set status = 'in_progress', run_count = t.run_count + 1, updated_at = now()
    from claim join c on c.task_id = claim.task_id
    where t.id = claim.task_id
    returning "t"."id", "t"."instance_id", "t"."title", "t"."description", "t"."status", "t"."specialty", "t"."assigned_persona_id", "t"."assigned_human", "t"."notes", "t"."metadata", "t"."run_count", "t"."created_at", claim.artifact_id, c.n
  ;
-- parameters: [["00000000-0000-4000-8000-000000000003"],[5],["Write the guide"],[{"runId":"00000000-0000-4000-8000-000000000002","specialty":"docs"}],"00000000-0000-4000-8000-000000000001","00000000-0000-4000-8000-000000000002"]

-- finishTasks

    with inst as (
      select "i"."id", "i"."machine_id", "i"."protocol_id", "i"."state", "i"."context", "i"."channel_id", "i"."guild_id", "i"."created_by_user_id", "i"."updated_by_user_id", "i"."version", "i"."state_visit", "i"."state_entered_at", "i"."registry_instance_id", "i"."active_run_id", "i"."archived_at", "i"."created_at",
        (select r.status from workflow_runs as r where r.id = $1::uuid) as run_status
      from workflow_instances as i where i.id = $2::uuid
      for share of i
    ), open as (
      select from inst where run_status = 'running' and archived_at is null
    ), f as (
      select * from unnest(
        $3::uuid[],
        $4::uuid[],
        $5::boolean[],
        $6::text[],
        $7::text[],
        $8::text[],
        $9::float8[],
        $10::float8[]
      ) as f (task_id, artifact_id, artifact_ready, content, task_run_status, task_status, wall_ms, model_ms)
    ), ended as (
      update workflow_task_runs as tr
      set status = f.task_run_status, wall_ms = f.wall_ms, model_ms = f.model_ms, finished_at = now()
      from f
      where exists (select from open)
        and tr.run_id = $11::uuid and tr.task_id = f.task_id and tr.status = 'running'
      returning f.task_id, f.artifact_id, f.artifact_ready, f.content, f.task_run_status, f.task_status
    ), artifact as (
      update workflow_artifacts as a set content = ended.content, status = 'ready'
      from ended where a.id = ended.artifact_id and ended.artifact_ready
    ), task as (
      update workflow_tasks as t set status = ended.task_status, updated_at = now()
      from ended where t.id = ended.task_id
    ), counted as (
      update workflow_runs
      set progress = progress || jsonb_build_object(
        'completed', coalesce((progress ->> 'completed')::int, 0)
          + (select count(*) from ended where task_run_status = 'completed'),
        'failed', coalesce((progress ->> 'failed')::int, 0)
          + (select count(*) from ended where task_run_status = 'failed'))
      where id = $12::uuid and exists (select from ended)
    )
    select inst.*, exists (select from open) as open, (select count(*)::int from ended) as ended
    from inst
  ;
-- parameters: ["00000000-0000-4000-8000-000000000002","00000000-0000-4000-8000-000000000001",["00000000-0000-4000-8000-000000000003","00000000-0000-4000-8000-000000000002"],["00000000-0000-4000-8000-000000000004","00000000-0000-4000-8000-000000000001"],[true,false],["# Guide",""],["completed","failed"],["completed","blocked"],[12.5,3],[10,2],"00000000-0000-4000-8000-000000000002","00000000-0000-4000-8000-000000000002"]

-- finishRun
update "workflow_runs" set "status" = $1, "error" = $2, "finished_at" = now(), "lease_until" = $3 where "id" = $4 and "status" in ($5, $6) returning "id", "instance_id", "status", "trigger", "task_ids", "progress", "error", "created_at", "finished_at", "run_tasks", "concurrency", "lease_until", "started_at", "created_by_user_id";
-- parameters: ["completed",null,null,"00000000-0000-4000-8000-000000000002","queued","running"]

-- tasksPerPersona
select "assigned_persona_id", count(*) as "n" from "workflow_tasks" where "instance_id" = $1 and "assigned_persona_id" is not null group by "assigned_persona_id";
-- parameters: ["00000000-0000-4000-8000-000000000001"]

-- orphanedRuns
select "id" from "workflow_runs" where "status" in ($1, $2) and coalesce(lease_until, created_at + make_interval(secs => $3)) < now() order by "created_at" limit $4;
-- parameters: ["queued","running",30,100]
