-- The work spine (internal/work, migrations/00053_work.sql): one row per pending item.

-- name: EnqueueWork :exec
-- In the transaction that made the work. An item already pending is queued again for
-- run_after (a turn that continues once more, a reminder moved): its claim, if any, is void.
INSERT INTO work (owner_id, kind, key, run_after)
VALUES (sqlc.arg(owner_id), sqlc.arg(kind), sqlc.arg(key), sqlc.arg(run_after)::timestamptz)
ON CONFLICT (owner_id, kind, key) DO UPDATE SET state = 'queued', attempts = 0,
    run_after = excluded.run_after, lease_until = NULL, last_error = '', updated_at = clock_timestamp();

-- name: ClaimWork :one
-- Takes an item due at now, or one whose lease lapsed, for lease_until; claimed_at (its
-- updated_at) is the claim's token, so a later Enqueue or claim voids this one.
UPDATE work SET state = 'running', attempts = attempts + 1,
    lease_until = sqlc.arg(lease_until)::timestamptz, updated_at = clock_timestamp()
WHERE owner_id = sqlc.arg(owner_id) AND kind = sqlc.arg(kind) AND key = sqlc.arg(key)
    AND ((state = 'queued' AND run_after <= sqlc.arg(now)::timestamptz)
      OR (state = 'running' AND lease_until <= sqlc.arg(now)::timestamptz))
RETURNING attempts, updated_at AS claimed_at;

-- name: FinishWork :execrows
DELETE FROM work
WHERE owner_id = sqlc.arg(owner_id) AND kind = sqlc.arg(kind) AND key = sqlc.arg(key)
    AND state = 'running' AND updated_at = sqlc.arg(claimed_at)::timestamptz;

-- name: RetryWork :execrows
-- A failed attempt: queued again for run_after, or failed for good when failed is set.
UPDATE work SET state = CASE WHEN sqlc.arg(failed)::boolean THEN 'failed' ELSE 'queued' END,
    run_after = sqlc.arg(run_after)::timestamptz, lease_until = NULL,
    last_error = left(sqlc.arg(last_error)::text, 2000), updated_at = clock_timestamp()
WHERE owner_id = sqlc.arg(owner_id) AND kind = sqlc.arg(kind) AND key = sqlc.arg(key)
    AND state = 'running' AND updated_at = sqlc.arg(claimed_at)::timestamptz;

-- name: GetWork :one
SELECT kind, key, state, attempts, run_after, lease_until, last_error, created_at FROM work
WHERE owner_id = sqlc.arg(owner_id) AND kind = sqlc.arg(kind) AND key = sqlc.arg(key);

-- name: ScanDueWork :many
-- Cross-owner (the Door, work.door): the items due — queued past their kind's due time
-- (run_after, plus the kind's grace for its hand-off) — and the running ones whose lease
-- lapsed at now, oldest first. Each is claimed in its owner's own transaction. latest is the
-- latest of the due times: the bound the partial index work_queued serves (the per-kind due
-- time depends on the row, which no index can).
-- A kind this process does not serve has no due time (NULL): never due here.
SELECT owner_id, kind, key FROM work
WHERE (state = 'queued' AND run_after <= sqlc.arg(latest)::timestamptz
        AND run_after <= (sqlc.arg(due)::timestamptz[])[array_position(sqlc.arg(kinds)::text[], kind)])
    OR (state = 'running' AND lease_until <= sqlc.arg(now)::timestamptz AND kind = ANY(sqlc.arg(kinds)::text[]))
ORDER BY run_after, owner_id, key LIMIT sqlc.arg(max_rows);
