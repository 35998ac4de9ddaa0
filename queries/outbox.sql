-- name: EnqueueIngest :exec
INSERT INTO memory_outbox (owner_id, turn_id, conversation_id)
VALUES (sqlc.arg(owner_id), sqlc.arg(turn_id), sqlc.arg(conversation_id))
ON CONFLICT (turn_id) DO NOTHING;
