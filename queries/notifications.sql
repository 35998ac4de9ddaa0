-- name: CreateNotification :one
INSERT INTO notifications (owner_id, channel, title, message, turn_id)
VALUES (sqlc.arg(owner_id), sqlc.arg(channel), sqlc.arg(title), sqlc.arg(message), sqlc.narg(turn_id))
RETURNING *;

-- name: ListNotifications :many
SELECT * FROM notifications WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);
