
-- name: CreateSchedule :one
INSERT INTO schedules (owner_id, job, cron, timezone, payload, enabled)
VALUES (sqlc.arg(owner_id), sqlc.arg(job), sqlc.arg(cron), sqlc.arg(timezone), sqlc.arg(payload), sqlc.arg(enabled))
RETURNING *;

-- name: ListSchedules :many
SELECT * FROM schedules WHERE owner_id = sqlc.arg(owner_id) ORDER BY job;

-- name: GetScheduleByJob :one
SELECT * FROM schedules WHERE owner_id = sqlc.arg(owner_id) AND job = sqlc.arg(job);

-- name: CountSchedules :one
SELECT count(*) FROM schedules WHERE owner_id = sqlc.arg(owner_id);

-- name: DeleteSchedule :execrows
DELETE FROM schedules WHERE owner_id = sqlc.arg(owner_id) AND job = sqlc.arg(job);

-- name: LockSchedule :many
-- Locks the schedule for this claim; a concurrent tick holding it skips instead of waiting.
SELECT id FROM schedules WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) FOR UPDATE SKIP LOCKED;


-- name: ClaimRun :one
-- Claims a run exactly once: a second claim for the same schedule and time inserts nothing.
INSERT INTO job_runs (id, owner_id, schedule_id, job, trigger, scheduled_for, status, error, started_at, finished_at)
VALUES (sqlc.arg(id), sqlc.arg(owner_id), sqlc.narg(schedule_id), sqlc.arg(job), sqlc.arg(trigger), sqlc.arg(scheduled_for),
        sqlc.arg(status), sqlc.arg(error), sqlc.narg(started_at), sqlc.narg(finished_at))
ON CONFLICT DO NOTHING
RETURNING *;

-- name: StartQueuedRun :one
-- Moves a queued run on (to running, or straight to skipped); exactly one caller wins.
UPDATE job_runs SET status = sqlc.arg(status), error = sqlc.arg(error), started_at = sqlc.arg(now),
    finished_at = CASE WHEN sqlc.arg(status)::text = 'running' THEN NULL ELSE sqlc.arg(now)::timestamptz END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'queued'
RETURNING *;

-- name: FinishRun :one
UPDATE job_runs SET status = sqlc.arg(status), turn_id = sqlc.narg(turn_id), error = sqlc.arg(error),
    finished_at = sqlc.arg(now)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'running'
RETURNING *;

-- name: AttachRunTurn :one
-- Records the turn of a run that stays running: its turn stopped before the invocation's
-- deadline (continuing) and finishes in another invocation.
UPDATE job_runs SET turn_id = sqlc.arg(turn_id)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'running'
RETURNING *;

-- name: RunningRunOfTurn :one
-- The run still running whose turn is turn_id (a continued turn that just finished).
SELECT * FROM job_runs
WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) AND status = 'running'
ORDER BY created_at LIMIT 1;

-- name: GetRun :one
SELECT * FROM job_runs WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListRuns :many
SELECT * FROM job_runs
WHERE owner_id = sqlc.arg(owner_id) AND (sqlc.arg(job)::text = '' OR job = sqlc.arg(job)::text)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: PreviousRun :one
-- The latest run of a job before another one that started a turn (for "since the last briefing").
SELECT * FROM job_runs
WHERE owner_id = sqlc.arg(owner_id) AND job = sqlc.arg(job) AND id <> sqlc.arg(exclude_id)
  AND status IN ('completed', 'suspended') AND started_at IS NOT NULL
ORDER BY started_at DESC LIMIT 1;


-- name: CreateWebhook :one
INSERT INTO webhooks (owner_id, hook_id, source, secret)
VALUES (sqlc.arg(owner_id), sqlc.arg(hook_id), sqlc.arg(source), sqlc.arg(secret))
RETURNING id, owner_id, hook_id, source, created_at, revoked_at;

-- name: ListWebhooks :many
SELECT id, owner_id, hook_id, source, created_at, revoked_at FROM webhooks
WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at, id;

-- name: RevokeWebhook :execrows
UPDATE webhooks SET revoked_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND hook_id = sqlc.arg(hook_id) AND revoked_at IS NULL;

-- name: InsertDelivery :many
-- Records a delivery unless its webhook-id was seen before on this hook (a replay).
INSERT INTO webhook_deliveries (owner_id, webhook_id, message_id, run_id, body, received_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(webhook_id), sqlc.arg(message_id), sqlc.arg(run_id), sqlc.arg(body), sqlc.arg(received_at))
ON CONFLICT (webhook_id, message_id) DO NOTHING
RETURNING run_id;

-- name: DeliveryRunID :one
SELECT run_id FROM webhook_deliveries
WHERE owner_id = sqlc.arg(owner_id) AND webhook_id = sqlc.arg(webhook_id) AND message_id = sqlc.arg(message_id);

-- name: RunDelivery :one
SELECT d.message_id, d.body, d.received_at, w.source FROM webhook_deliveries d
JOIN webhooks w ON w.id = d.webhook_id AND w.owner_id = d.owner_id
WHERE d.owner_id = sqlc.arg(owner_id) AND d.run_id = sqlc.arg(run_id);


-- name: ClearDefaultChannel :exec
UPDATE notification_channels SET is_default = false WHERE owner_id = sqlc.arg(owner_id) AND is_default;

-- name: UpsertChannel :one
-- The webhook channel of the first API (Deliverer.SetChannel): named "webhook", the default.
INSERT INTO notification_channels (owner_id, name, kind, url, topic, enabled, is_default)
VALUES (sqlc.arg(owner_id), 'webhook', 'webhook', sqlc.arg(url), sqlc.arg(topic), true, true)
ON CONFLICT (owner_id, name) DO UPDATE SET kind = 'webhook', url = excluded.url, topic = excluded.topic,
    settings = '{}', secret = NULL, enabled = true, is_default = true, created_at = now()
RETURNING *;

-- name: GetChannel :one
SELECT * FROM notification_channels WHERE owner_id = sqlc.arg(owner_id) AND is_default;

-- name: DeleteChannel :execrows
DELETE FROM notification_channels WHERE owner_id = sqlc.arg(owner_id) AND is_default;

-- name: CreateChannel :one
-- The first channel of an owner becomes their default.
INSERT INTO notification_channels (owner_id, name, kind, url, topic, settings, secret, enabled, is_default)
VALUES (sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(kind), sqlc.arg(url), sqlc.arg(topic), sqlc.arg(settings),
    sqlc.narg(secret), true,
    sqlc.arg(make_default)::boolean OR NOT EXISTS (SELECT 1 FROM notification_channels d WHERE d.owner_id = sqlc.arg(owner_id) AND d.is_default))
RETURNING *;

-- name: ListChannels :many
SELECT * FROM notification_channels WHERE owner_id = sqlc.arg(owner_id) ORDER BY name;

-- name: GetChannelByName :one
SELECT * FROM notification_channels WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name);

-- name: DeleteChannelByName :execrows
DELETE FROM notification_channels WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name);

-- name: MakeDefaultChannel :execrows
-- Run after ClearDefaultChannel in the same transaction (one default per owner: the unique
-- partial index notification_channels_one_default is checked row by row, so the old default
-- is cleared by its own statement first).
UPDATE notification_channels SET is_default = true WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name);

-- name: MarkChannelGone :execrows
-- The destination answered that it no longer exists (a Web Push subscription's 404 or 410):
-- the channel is disabled, and gone_at says since when.
UPDATE notification_channels SET enabled = false, gone_at = sqlc.arg(gone_at)
WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name) AND gone_at IS NULL;

-- name: PromoteDefaultChannel :exec
-- After the default channel is removed, the oldest remaining one becomes the default.
UPDATE notification_channels SET is_default = true
WHERE id = (SELECT c.id FROM notification_channels c WHERE c.owner_id = sqlc.arg(owner_id) ORDER BY c.created_at, c.name LIMIT 1)
  AND NOT EXISTS (SELECT 1 FROM notification_channels d WHERE d.owner_id = sqlc.arg(owner_id) AND d.is_default);

-- name: ClaimDeliveries :many
-- Leases the due, undelivered notifications created since the channel was set up; a
-- concurrent flush skips the rows this one holds.
UPDATE notifications n SET delivery_attempts = n.delivery_attempts + 1, delivery_lease_until = sqlc.arg(lease_until)
WHERE n.owner_id = sqlc.arg(owner_id) AND n.id IN (
    SELECT c.id FROM notifications c
    WHERE c.owner_id = sqlc.arg(owner_id) AND c.delivered_at IS NULL
      AND c.delivery_next_at IS NOT NULL AND c.delivery_next_at <= sqlc.arg(now)
      AND (c.delivery_lease_until IS NULL OR c.delivery_lease_until <= sqlc.arg(now))
      AND c.created_at >= sqlc.arg(since)
    ORDER BY c.created_at, c.id LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED)
RETURNING n.*;

-- name: MarkDelivered :execrows
UPDATE notifications SET delivered_at = sqlc.arg(now), delivery_next_at = NULL, delivery_lease_until = NULL, delivery_error = ''
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: MarkDeliveryFailed :execrows
UPDATE notifications SET delivery_next_at = sqlc.narg(next_at), delivery_lease_until = NULL, delivery_error = sqlc.arg(error)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND delivered_at IS NULL;

-- name: ListNotificationsWithDelivery :many
SELECT * FROM notifications WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);


-- name: ScanSchedules :many
-- Every enabled schedule with the time its due search starts from: its last claimed run, or
-- its creation.
SELECT s.id, s.owner_id, s.job, s.cron, s.timezone, s.payload, s.created_at,
    COALESCE((SELECT max(r.scheduled_for) FROM job_runs r WHERE r.schedule_id = s.id), s.created_at)::timestamptz AS since
FROM schedules s
WHERE s.enabled
ORDER BY s.owner_id, s.job;

-- name: LookupWebhook :one
SELECT id, owner_id, hook_id, source, secret, revoked_at FROM webhooks WHERE hook_id = sqlc.arg(hook_id);

-- name: ScanChannelOwners :many
SELECT DISTINCT owner_id FROM notification_channels WHERE enabled ORDER BY owner_id;

-- name: FailStaleRuns :execrows
-- A run still marked running long after its process could be working on it died with it.
UPDATE job_runs SET status = 'failed', finished_at = now(),
    error = 'interrupted: the process running this job stopped before it finished'
-- A run whose turn is still continuing or running (a turn that outlives its invocation's
-- deadline goes on in another one) is not stale: it finishes when its turn does.
WHERE job_runs.owner_id = sqlc.arg(owner_id) AND job_runs.status = 'running'
    AND job_runs.started_at < sqlc.arg(before)::timestamptz
    AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.owner_id = job_runs.owner_id AND t.id = job_runs.turn_id
        AND t.status IN ('running', 'continuing'));
