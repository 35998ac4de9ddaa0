-- name: CreateTurn :one
INSERT INTO turns (owner_id, conversation_id, trigger, model)
VALUES (sqlc.arg(owner_id), sqlc.arg(conversation_id), sqlc.arg(trigger), sqlc.arg(model))
RETURNING *;

-- name: GetTurn :one
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListTurns :many
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: ListTurnsByStatus :many
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id) AND status = sqlc.arg(status)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: SaveTurn :execrows
-- Moves a running or resuming turn to its next status, guarded by version.
UPDATE turns SET
    status = sqlc.arg(status), version = version + 1, lease_until = NULL,
    state = sqlc.arg(state), iterations = sqlc.arg(iterations),
    input_tokens = sqlc.arg(input_tokens), output_tokens = sqlc.arg(output_tokens),
    cached_tokens = sqlc.arg(cached_tokens), cost_micros = sqlc.arg(cost_micros),
    model = sqlc.arg(model), answer = sqlc.narg(answer), error = sqlc.narg(error),
    expires_at = sqlc.narg(expires_at), updated_at = now(),
    finished_at = CASE WHEN sqlc.arg(status)::text IN ('completed', 'failed', 'aborted') THEN now() END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND version = sqlc.arg(version)
    AND status IN ('running', 'resuming');

-- name: ClaimTurn :one
-- now is the caller's clock (docs/ARCHITECTURE.md §9): expiry and leases are decided by it,
-- never by the database's now().
-- The exactly-once claim of a suspended turn: one conditional update that returns the state.
-- A resuming turn whose lease lapsed (its process died) can be claimed again to recover it.
UPDATE turns SET status = 'resuming', version = version + 1,
    lease_until = sqlc.arg(now)::timestamptz + make_interval(secs => sqlc.arg(lease_seconds)::float8), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
    AND ((status = 'suspended' AND (expires_at IS NULL OR expires_at > sqlc.arg(now)))
        OR (status = 'resuming' AND lease_until < sqlc.arg(now)))
RETURNING *;

-- name: ExpireTurns :execrows
UPDATE turns SET status = 'expired', version = version + 1, updated_at = now(), finished_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND status = 'suspended' AND expires_at <= sqlc.arg(now)::timestamptz;

-- name: ListConversationTurns :many
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id) AND conversation_id = sqlc.arg(conversation_id)
ORDER BY created_at, id LIMIT sqlc.arg(max_rows);

-- name: FailStaleTurns :execrows
-- A turn still running long after any process could be working on it (the longest function
-- timeout is 15 minutes) died with its process: it is failed, so it does not linger.
UPDATE turns SET status = 'failed', version = version + 1, updated_at = now(), finished_at = now(),
    error = 'interrupted: the process running this turn stopped before it finished', state = NULL
WHERE owner_id = sqlc.arg(owner_id) AND status = 'running'
    AND updated_at < sqlc.arg(before);

-- name: ClaimContinuingTurn :one
-- The exactly-once claim of a continuing turn (stopped before its function's deadline,
-- docs/ARCHITECTURE.md §2): one conditional update back to running that returns the state.
-- A claimed turn whose invocation dies stays running and is failed by FailStaleTurns.
UPDATE turns SET status = 'running', version = version + 1,
    lease_until = sqlc.arg(now)::timestamptz + make_interval(secs => sqlc.arg(lease_seconds)::float8), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'continuing'
RETURNING *;

-- name: ListContinuingTurns :many
-- Continuing turns last saved before before: their continuation message was lost or failed.
SELECT id FROM turns WHERE owner_id = sqlc.arg(owner_id) AND status = 'continuing'
    AND updated_at < sqlc.arg(before)::timestamptz
ORDER BY updated_at, id LIMIT sqlc.arg(max_rows);
