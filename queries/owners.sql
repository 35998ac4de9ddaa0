-- name: CreateOwner :one
INSERT INTO owners (name) VALUES (sqlc.arg(name)) RETURNING *;

-- name: ListOwners :many
SELECT * FROM owners ORDER BY created_at, id;

-- name: GetOwner :one
SELECT * FROM owners WHERE id = sqlc.arg(id);

-- name: SetOwnerMode :execrows
UPDATE owners SET mode = sqlc.arg(mode) WHERE id = sqlc.arg(id);

-- name: CreateAPIKey :one
INSERT INTO api_keys (owner_id, name, prefix, hash)
VALUES (sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(prefix), sqlc.arg(hash))
RETURNING id, owner_id, name, prefix, created_at, last_used_at, revoked_at;

-- name: LookupAPIKey :one
SELECT k.id, k.owner_id, o.name AS owner_name
FROM api_keys k JOIN owners o ON o.id = k.owner_id
WHERE k.hash = sqlc.arg(hash) AND k.revoked_at IS NULL;

-- name: ListAPIKeys :many
SELECT id, owner_id, name, prefix, created_at, last_used_at, revoked_at
FROM api_keys WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at, id;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND revoked_at IS NULL;
