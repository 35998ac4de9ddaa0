-- name: CreateWebSession :one
INSERT INTO web_sessions (owner_id, hash, user_agent, expires_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(hash), sqlc.arg(user_agent), sqlc.arg(expires_at))
RETURNING id, owner_id, user_agent, created_at, expires_at, revoked_at;

-- name: ListWebSessions :many
SELECT id, owner_id, user_agent, created_at, expires_at, revoked_at
FROM web_sessions
WHERE owner_id = sqlc.arg(owner_id) AND revoked_at IS NULL AND expires_at > now()
ORDER BY created_at DESC, id
LIMIT 100;

-- name: RevokeWebSession :execrows
UPDATE web_sessions SET revoked_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND revoked_at IS NULL;

-- name: LookupWebSession :one
SELECT s.id, s.owner_id, s.expires_at, o.name AS owner_name
FROM web_sessions s JOIN owners o ON o.id = s.owner_id
WHERE s.hash = sqlc.arg(hash) AND s.revoked_at IS NULL AND s.expires_at > now();
