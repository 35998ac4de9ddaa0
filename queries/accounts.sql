-- name: CreateAccount :one
INSERT INTO connected_accounts (owner_id, kind, settings, secret)
VALUES (sqlc.arg(owner_id), sqlc.arg(kind), sqlc.arg(settings), sqlc.arg(secret))
RETURNING kind, settings, secret, created_at;

-- name: ListAccounts :many
SELECT kind, settings, secret, created_at FROM connected_accounts
WHERE owner_id = sqlc.arg(owner_id) ORDER BY kind;

-- name: GetAccount :one
SELECT kind, settings, secret, created_at FROM connected_accounts
WHERE owner_id = sqlc.arg(owner_id) AND kind = sqlc.arg(kind);

-- name: DeleteAccount :execrows
DELETE FROM connected_accounts WHERE owner_id = sqlc.arg(owner_id) AND kind = sqlc.arg(kind);
