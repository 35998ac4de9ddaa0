-- name: CreateRule :one
INSERT INTO standing_rules (owner_id, tool, predicate, match, effect, source, note)
VALUES (sqlc.arg(owner_id), sqlc.arg(tool), sqlc.arg(predicate), sqlc.arg(match), sqlc.arg(effect), sqlc.arg(source), sqlc.arg(note))
RETURNING *;

-- name: ListRules :many
SELECT * FROM standing_rules WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at, id;

-- name: RulesForTool :many
SELECT * FROM standing_rules WHERE owner_id = sqlc.arg(owner_id) AND tool IN (sqlc.arg(tool), '*')
ORDER BY created_at, id;

-- name: DeleteRule :execrows
DELETE FROM standing_rules WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);
