-- name: CreateTurn :one
-- A new turn runs under a lease: its process renews it while it waits on its model, and the
-- sweep fails a running turn whose lease lapsed (its process died).
INSERT INTO turns (owner_id, conversation_id, trigger, model, lease_until, holder)
VALUES (sqlc.arg(owner_id), sqlc.arg(conversation_id), sqlc.arg(trigger), sqlc.arg(model),
    sqlc.arg(now)::timestamptz + make_interval(secs => sqlc.arg(lease_seconds)::float8), sqlc.arg(holder))
RETURNING *;

-- name: RenewTurnLease :one
-- A running or resuming turn's process is alive: its lease runs until now + lease_seconds
-- (never shortened). Returns whether the owner asked the turn to stop, as TurnCancelRequested.
UPDATE turns SET lease_until = greatest(lease_until, sqlc.arg(now)::timestamptz + make_interval(secs => sqlc.arg(lease_seconds)::float8)),
    holder = sqlc.arg(holder)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status IN ('running', 'resuming')
RETURNING (cancel_requested_at IS NOT NULL)::boolean AS requested;

-- name: ReleaseHolderTurns :execrows
-- The process holder names is gone: the leases of the running and resuming turns it held
-- end at now, so the sweep fails or recovers them at once (migration 00050).
UPDATE turns SET lease_until = sqlc.arg(now)::timestamptz - interval '1 millisecond'
WHERE owner_id = sqlc.arg(owner_id) AND holder = sqlc.arg(holder) AND status IN ('running', 'resuming')
    AND lease_until >= sqlc.arg(now)::timestamptz;

-- name: ScanHeldTurns :many
-- Cross-owner (the Door, turns.door): the owners and holders of running and resuming turns
-- held by processes of one host (holder_prefix: "host/"), whose leases have not lapsed yet.
SELECT DISTINCT owner_id, holder FROM turns WHERE status IN ('running', 'resuming')
    AND lease_until >= sqlc.arg(now)::timestamptz AND starts_with(holder, sqlc.arg(holder_prefix)::text)
ORDER BY owner_id, holder;

-- name: LapsedResumingTurns :many
-- Resuming turns whose claim's lease lapsed at now: the confirm that claimed them died. The
-- sweep recovers each through the claim (a call it left executing becomes unknown).
SELECT id FROM turns WHERE owner_id = sqlc.arg(owner_id) AND status = 'resuming'
    AND lease_until < sqlc.arg(now)::timestamptz
ORDER BY updated_at, id LIMIT 20;

-- name: GetTurn :one
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListTurns :many
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: ListTurnsByStatus :many
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id) AND status = sqlc.arg(status)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: SaveTurn :execrows
-- Moves a running or resuming turn to its next status, guarded by version. A suspension or
-- continuation saved after the owner asked the turn to stop (cancel_requested_at, racing the
-- loop's last check) is saved cancelled instead: no later claim can run its writes.
UPDATE turns SET
    status = CASE WHEN cancel_requested_at IS NOT NULL AND sqlc.arg(status)::text IN ('suspended', 'continuing')
        THEN 'cancelled' ELSE sqlc.arg(status)::text END,
    version = version + 1, lease_until = NULL,
    state = CASE WHEN cancel_requested_at IS NOT NULL AND sqlc.arg(status)::text IN ('suspended', 'continuing')
        THEN NULL ELSE sqlc.arg(state)::jsonb END,
    iterations = sqlc.arg(iterations),
    input_tokens = sqlc.arg(input_tokens), output_tokens = sqlc.arg(output_tokens),
    cached_tokens = sqlc.arg(cached_tokens), cost_micros = sqlc.arg(cost_micros),
    model = sqlc.arg(model), answer = sqlc.narg(answer),
    taint = CASE WHEN taint = '' THEN sqlc.arg(taint)::text ELSE taint END,
    error = CASE WHEN cancel_requested_at IS NOT NULL AND sqlc.arg(status)::text IN ('suspended', 'continuing')
        THEN 'cancelled by the owner' ELSE sqlc.narg(error)::text END,
    expires_at = CASE WHEN cancel_requested_at IS NOT NULL AND sqlc.arg(status)::text IN ('suspended', 'continuing')
        THEN NULL ELSE sqlc.narg(expires_at)::timestamptz END,
    updated_at = now(),
    finished_at = CASE WHEN sqlc.arg(status)::text IN ('completed', 'failed', 'aborted', 'cancelled')
        OR (cancel_requested_at IS NOT NULL AND sqlc.arg(status)::text IN ('suspended', 'continuing')) THEN now() END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND version = sqlc.arg(version)
    AND status IN ('running', 'resuming');

-- name: ClaimTurn :one
-- now is the caller's clock (docs/ARCHITECTURE.md §9): expiry and leases are decided by it,
-- never by the database's now().
-- The exactly-once claim of a suspended turn: one conditional update that returns the state.
-- A resuming turn whose lease lapsed (its process died) can be claimed again to recover it.
UPDATE turns SET status = 'resuming', version = version + 1,
    lease_until = sqlc.arg(now)::timestamptz + make_interval(secs => sqlc.arg(lease_seconds)::float8), holder = sqlc.arg(holder), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
    AND ((status = 'suspended' AND (expires_at IS NULL OR expires_at > sqlc.arg(now)))
        OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz))
    AND cancel_requested_at IS NULL
RETURNING *;

-- name: ExpireTurns :execrows
UPDATE turns SET status = 'expired', version = version + 1, updated_at = now(), finished_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND status = 'suspended' AND expires_at <= sqlc.arg(now)::timestamptz;

-- name: ListConversationTurns :many
SELECT * FROM turns WHERE owner_id = sqlc.arg(owner_id) AND conversation_id = sqlc.arg(conversation_id)
ORDER BY created_at, id LIMIT sqlc.arg(max_rows);

-- name: FailStaleTurns :execrows
-- A turn still running long after any process could be working on it (the longest function
-- timeout is 15 minutes), or whose lease lapsed at now (its process stopped renewing it), died
-- with its process: it is failed, so it does not linger.
-- One the owner had asked to stop ends cancelled.
UPDATE turns SET status = CASE WHEN cancel_requested_at IS NULL THEN 'failed' ELSE 'cancelled' END,
    version = version + 1, updated_at = now(), finished_at = now(), state = NULL,
    error = CASE WHEN cancel_requested_at IS NULL THEN 'interrupted: the process running this turn stopped before it finished'
        ELSE 'cancelled by the owner' END
WHERE owner_id = sqlc.arg(owner_id) AND status = 'running'
    AND (updated_at < sqlc.arg(before) OR lease_until < sqlc.arg(now)::timestamptz);

-- name: ClaimContinuingTurn :one
-- The exactly-once claim of a continuing turn (stopped before its function's deadline,
-- docs/ARCHITECTURE.md §2): one conditional update back to running that returns the state.
-- A claimed turn whose invocation dies stays running and is failed by FailStaleTurns.
UPDATE turns SET status = 'running', version = version + 1,
    lease_until = sqlc.arg(now)::timestamptz + make_interval(secs => sqlc.arg(lease_seconds)::float8), holder = sqlc.arg(holder), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'continuing'
    AND cancel_requested_at IS NULL
RETURNING *;

-- name: ScanSweepOwners :many
-- Cross-owner (the Door: turns.door, job_runs.door, household_approvals.door): the owners the
-- sweep has work for — a suspended turn or a pending household vote past its expiry, a turn
-- or job run running since before stale_before, a running or resuming turn whose lease lapsed. A superset is harmless (the owner's own
-- sweep finds nothing); an owner outside it is not swept, and costs no transaction.
SELECT owner_id FROM turns WHERE status = 'suspended' AND expires_at <= sqlc.arg(now)::timestamptz
UNION
SELECT owner_id FROM turns WHERE status = 'running' AND updated_at < sqlc.arg(stale_before)::timestamptz
UNION
SELECT owner_id FROM turns WHERE status IN ('running', 'resuming') AND lease_until < sqlc.arg(now)::timestamptz
UNION
SELECT owner_id FROM job_runs WHERE status = 'running' AND started_at < sqlc.arg(stale_before)::timestamptz
UNION
SELECT requester_id FROM household_approvals WHERE status = 'pending' AND expires_at <= sqlc.arg(now)::timestamptz
ORDER BY 1;

-- name: CancelTurn :one
-- The owner asks a turn to stop (docs/ARCHITECTURE.md §2): a turn no process is running —
-- suspended, continuing, or resuming with its lease lapsed — is cancelled at once; a running
-- or resuming one keeps its status and version (its loop's saves stay valid) and carries the
-- request, which the loop reads at its next step boundary (TurnCancelRequested). An ended
-- turn is not touched (no row). now is the caller's clock.
UPDATE turns SET
    status = CASE WHEN status IN ('suspended', 'continuing') OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz)
        THEN 'cancelled' ELSE status END,
    version = CASE WHEN status IN ('suspended', 'continuing') OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz)
        THEN version + 1 ELSE version END,
    state = CASE WHEN status IN ('suspended', 'continuing') OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz)
        THEN NULL ELSE state END,
    error = CASE WHEN status IN ('suspended', 'continuing') OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz)
        THEN 'cancelled by the owner' ELSE error END,
    finished_at = CASE WHEN status IN ('suspended', 'continuing') OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz)
        THEN now() ELSE finished_at END,
    expires_at = CASE WHEN status IN ('suspended', 'continuing') OR (status = 'resuming' AND lease_until < sqlc.arg(now)::timestamptz)
        THEN NULL ELSE expires_at END,
    cancel_requested_at = COALESCE(cancel_requested_at, sqlc.arg(now)::timestamptz)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
    AND status IN ('running', 'resuming', 'suspended', 'continuing')
RETURNING *;

-- name: TurnCancelRequested :one
-- Whether the owner asked the turn to stop: the loop's check at each step boundary, read in
-- the same round trip as the kill switch.
SELECT (cancel_requested_at IS NOT NULL)::boolean AS requested FROM turns
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: CountPendingWrites :one
-- The owner's writes waiting for a decision (the web app's badge): the pending calls of
-- their suspended turns that have not expired on the caller's clock (turns_owner_status).
SELECT count(*)::int AS turns, COALESCE(sum(CASE jsonb_typeof(state->'pending')
        WHEN 'array' THEN jsonb_array_length(state->'pending') ELSE 0 END), 0)::int AS writes
FROM turns WHERE owner_id = sqlc.arg(owner_id) AND status = 'suspended'
    AND (expires_at IS NULL OR expires_at > sqlc.arg(now)::timestamptz);
