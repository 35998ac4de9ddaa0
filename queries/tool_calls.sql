-- name: InsertToolCall :exec
-- No RETURNING: in the turn loop's pipelined transaction it is deferred (store/pipeline.go).
INSERT INTO tool_calls (owner_id, turn_id, call_id, tool, kind, args, args_hash, status, decided_by, result)
VALUES (sqlc.arg(owner_id), sqlc.arg(turn_id), sqlc.arg(call_id), sqlc.arg(tool), sqlc.arg(kind),
    sqlc.arg(args), sqlc.arg(args_hash), sqlc.arg(status), sqlc.narg(decided_by), sqlc.narg(result));

-- name: ListToolCalls :many
SELECT * FROM tool_calls WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id)
ORDER BY created_at, call_id;

-- name: ListPendingToolCalls :many
SELECT * FROM tool_calls WHERE owner_id = sqlc.arg(owner_id) AND status = 'pending'
ORDER BY created_at, call_id;

-- name: UpdateToolCall :execrows
-- Moves one journal entry from an expected status to the next.
UPDATE tool_calls SET status = sqlc.arg(status), result = COALESCE(sqlc.narg(result), result),
    decided_by = COALESCE(sqlc.narg(decided_by), decided_by),
    decision_message = COALESCE(sqlc.narg(decision_message), decision_message),
    inverse = COALESCE(sqlc.narg(inverse), inverse), executed_at = COALESCE(sqlc.narg(executed_at), executed_at),
    updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) AND call_id = sqlc.arg(call_id)
    AND status = sqlc.arg(from_status);

-- name: MarkUnknownToolCalls :many
-- A call still executing when its turn is loaded again was interrupted: its outcome is unknown.
UPDATE tool_calls SET status = 'unknown', updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) AND status = 'executing'
RETURNING *;

-- name: GetToolCall :one
SELECT * FROM tool_calls WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) AND call_id = sqlc.arg(call_id);

-- name: MarkToolCallUndone :one
-- Marks a succeeded, reversible call undone, exactly once and only while it ran at or after
-- since (the undo window); no row when any of that does not hold. The row lock serialises
-- concurrent undos: the second finds undone_at set.
UPDATE tool_calls SET undone_at = sqlc.arg(undone_at), undone_by = sqlc.arg(undone_by), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) AND call_id = sqlc.arg(call_id)
    AND status = 'succeeded' AND inverse IS NOT NULL AND undone_at IS NULL AND executed_at >= sqlc.arg(since)
RETURNING *;
