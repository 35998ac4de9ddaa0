-- name: CreateConversation :one
INSERT INTO conversations (owner_id, title) VALUES (sqlc.arg(owner_id), sqlc.arg(title)) RETURNING *;

-- name: GetConversation :one
SELECT * FROM conversations WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListConversations :many
SELECT * FROM conversations WHERE owner_id = sqlc.arg(owner_id)
ORDER BY updated_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: TouchConversation :execrows
UPDATE conversations SET updated_at = now(),
    title = CASE WHEN title = '' THEN sqlc.arg(title) ELSE title END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: DeleteConversation :execrows
DELETE FROM conversations WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: InsertMessage :one
INSERT INTO messages (owner_id, conversation_id, turn_id, seq, role, content)
SELECT sqlc.arg(owner_id), sqlc.arg(conversation_id), sqlc.arg(turn_id),
    COALESCE(max(seq), 0) + 1, sqlc.arg(role), sqlc.arg(content)
FROM messages WHERE owner_id = sqlc.arg(owner_id) AND conversation_id = sqlc.arg(conversation_id)
RETURNING *;

-- name: ListMessages :many
SELECT * FROM messages WHERE owner_id = sqlc.arg(owner_id) AND conversation_id = sqlc.arg(conversation_id)
ORDER BY seq;
