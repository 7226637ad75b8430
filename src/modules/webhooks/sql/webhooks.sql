-- enabledEndpoints
select "id", "event_types", "observer_id" from "webhooks" where "enabled" = $1;
-- parameters: [true]

-- insertDeliveries
insert into "webhook_deliveries" ("id", "webhook_id", "event_id", "event_type", "body") values ($1, $2, $3, $4, $5) returning "id", "webhook_id", "event_id", "event_type", "status", "attempts", "last_status_code", "last_error", "created_at", "updated_at", "delivered_at";
-- parameters: ["00000000-0000-4000-8000-000000000001","00000000-0000-4000-8000-000000000002",5,"diary_entry","{}"]

-- deliveryToSend
select "d"."id", "d"."webhook_id", "d"."body", "d"."status", "w"."url", "w"."enabled", "w"."secret_ciphertext" from "webhook_deliveries" as "d" inner join "webhooks" as "w" on "w"."id" = "d"."webhook_id" where "d"."id" = $1;
-- parameters: ["00000000-0000-4000-8000-000000000001"]

-- recordAttempt
update "webhook_deliveries" set "attempts" = "attempts" + $1, "status" = $2, "last_status_code" = $3, "last_error" = $4, "updated_at" = now(), "delivered_at" = now() where "id" = $5 returning "attempts";
-- parameters: [1,"succeeded",200,null,"00000000-0000-4000-8000-000000000001"]

-- failWithoutAttempt
update "webhook_deliveries" set "status" = $1, "last_error" = $2, "updated_at" = now() where "id" = $3 and "status" = $4;
-- parameters: ["failed","disabled","00000000-0000-4000-8000-000000000001","pending"]

-- listDeliveries
select "id", "webhook_id", "event_id", "event_type", "status", "attempts", "last_status_code", "last_error", "created_at", "updated_at", "delivered_at" from "webhook_deliveries" where "webhook_id" = $1 and "status" = $2 order by "created_at" desc, "id" desc limit $3 offset $4;
-- parameters: ["00000000-0000-4000-8000-000000000002","failed",50,0]

-- listDeliveries
select count(*) as "n" from "webhook_deliveries" where "webhook_id" = $1 and "status" = $2;
-- parameters: ["00000000-0000-4000-8000-000000000002","failed"]

-- sweepDeliveries
delete from "webhook_deliveries" where "status" <> $1 and "updated_at" < now() - make_interval(days => $2);
-- parameters: ["pending",30]
