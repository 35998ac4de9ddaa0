-- name: CreateApprovalLink :exec
INSERT INTO approval_links (owner_id, turn_id, hash, approve, calls, suspended_until, expires_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(turn_id), sqlc.arg(hash), sqlc.arg(approve), sqlc.arg(calls),
        sqlc.arg(suspended_until), sqlc.arg(expires_at));

-- name: GetApprovalLink :one
SELECT id, turn_id, approve, calls, suspended_until, expires_at, used_at
FROM approval_links
WHERE owner_id = sqlc.arg(owner_id) AND hash = sqlc.arg(hash);

-- name: UseApprovalLink :execrows
UPDATE approval_links SET used_at = sqlc.arg(now)::timestamptz
WHERE owner_id = sqlc.arg(owner_id) AND hash = sqlc.arg(hash) AND used_at IS NULL AND expires_at > sqlc.arg(now);

-- name: LookupApprovalLinkOwner :one
SELECT owner_id FROM approval_links WHERE hash = sqlc.arg(hash);
