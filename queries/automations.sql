-- name: OwnerTimezone :one
SELECT timezone FROM owners WHERE id = sqlc.arg(id);

-- name: SetOwnerTimezone :execrows
UPDATE owners SET timezone = sqlc.arg(timezone) WHERE id = sqlc.arg(id);

-- name: CreateReminder :one
INSERT INTO reminders (owner_id, text, due_at, timezone, source_turn_id)
VALUES (sqlc.arg(owner_id), sqlc.arg(text), sqlc.arg(due_at), sqlc.arg(timezone), sqlc.narg(source_turn_id))
RETURNING *;

-- name: CountPendingReminders :one
SELECT count(*) FROM reminders WHERE owner_id = sqlc.arg(owner_id) AND status = 'pending';

-- name: ListReminders :many
-- Pending first (soonest first), then the latest fired and cancelled.
SELECT * FROM reminders WHERE owner_id = sqlc.arg(owner_id)
    AND (sqlc.arg(all_statuses)::boolean OR status = 'pending')
ORDER BY status <> 'pending', CASE WHEN status = 'pending' THEN due_at END, due_at DESC
LIMIT sqlc.arg(max_rows);

-- name: GetReminder :one
SELECT * FROM reminders WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: CancelReminder :one
UPDATE reminders SET status = 'cancelled'
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'pending'
RETURNING *;

-- name: FireReminder :one
-- The one claim of a reminder's firing: only a pending reminder that is due fires.
UPDATE reminders SET status = 'fired', fired_at = sqlc.arg(now)::timestamptz, late = sqlc.arg(late)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'pending' AND due_at <= sqlc.arg(now)::timestamptz
RETURNING *;

-- name: ScanDueReminders :many
SELECT id, owner_id, due_at FROM reminders
WHERE status = 'pending' AND due_at <= sqlc.arg(before)
ORDER BY due_at LIMIT sqlc.arg(max_rows);

-- name: CreateAutomation :one
INSERT INTO automations (owner_id, instruction, kind, cron, words, timezone, mail_from, mail_subject, hook_id, since)
VALUES (sqlc.arg(owner_id), sqlc.arg(instruction), sqlc.arg(kind), sqlc.arg(cron), sqlc.arg(words), sqlc.arg(timezone),
    sqlc.arg(mail_from), sqlc.arg(mail_subject), sqlc.arg(hook_id), sqlc.arg(since))
RETURNING *;

-- name: CountActiveAutomations :one
SELECT count(*) FROM automations WHERE owner_id = sqlc.arg(owner_id) AND status = 'active';

-- name: ListAutomations :many
SELECT * FROM automations WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at, id LIMIT sqlc.arg(max_rows);

-- name: GetAutomation :one
SELECT * FROM automations WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: SetAutomationStatus :one
-- Pause or resume; a resumed automation searches its due times from now on.
UPDATE automations SET status = sqlc.arg(status), paused_reason = sqlc.arg(paused_reason),
    failures = CASE WHEN sqlc.arg(status) = 'active' THEN 0 ELSE failures END,
    since = CASE WHEN sqlc.arg(status) = 'active' AND status <> 'active' THEN sqlc.arg(now) ELSE since END,
    updated_at = sqlc.arg(now)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
RETURNING *;

-- name: EditAutomation :one
UPDATE automations SET instruction = sqlc.arg(instruction), cron = sqlc.arg(cron), words = sqlc.arg(words),
    timezone = sqlc.arg(timezone), since = sqlc.arg(now), updated_at = sqlc.arg(now)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
RETURNING *;

-- name: DeleteAutomation :execrows
DELETE FROM automations WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: RecordAutomationOutcome :one
-- A run's outcome: a failure counts, anything else resets the count; at max_failures in a
-- row the automation pauses itself with the reason.
UPDATE automations SET
    failures = CASE WHEN sqlc.arg(failed)::boolean THEN failures + 1 ELSE 0 END,
    status = CASE WHEN sqlc.arg(failed)::boolean AND failures + 1 >= sqlc.arg(max_failures)::integer THEN 'paused' ELSE status END,
    paused_reason = CASE WHEN sqlc.arg(failed)::boolean AND failures + 1 >= sqlc.arg(max_failures)::integer
        THEN sqlc.arg(reason)::text ELSE paused_reason END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
RETURNING *;

-- name: ListAutomationRuns :many
SELECT * FROM job_runs WHERE owner_id = sqlc.arg(owner_id) AND job = sqlc.arg(job)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);
