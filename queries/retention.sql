-- name: RetireAudit :one
-- The sweep's retention (docs/ARCHITECTURE.md §21), through the Door: each call deletes at
-- most batch of the oldest rows older than before and returns how many went. The functions
-- (migrations/00040_retention.sql) are the only way the runtime deletes these rows.
SELECT retire_audit(sqlc.arg(before)::timestamptz, sqlc.arg(batch)::int)::bigint;

-- name: RetireWebhookDeliveries :one
SELECT retire_webhook_deliveries(sqlc.arg(before)::timestamptz, sqlc.arg(batch)::int)::bigint;

-- name: RetireMemoryOutbox :one
SELECT retire_memory_outbox(sqlc.arg(before)::timestamptz, sqlc.arg(batch)::int)::bigint;

-- name: RetireJobRuns :one
SELECT retire_job_runs(sqlc.arg(before)::timestamptz, sqlc.arg(batch)::int)::bigint;
