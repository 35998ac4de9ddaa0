-- name: CreateConversation :one
INSERT INTO conversations (owner_id, title) VALUES (sqlc.arg(owner_id), sqlc.arg(title)) RETURNING *;

-- name: GetConversation :one
SELECT * FROM conversations WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListConversations :many
SELECT * FROM conversations WHERE owner_id = sqlc.arg(owner_id)
ORDER BY updated_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: TouchConversation :execrows
-- Deferred in the turn loop's pipelined transaction, checked to move one row (store/pipeline.go).
UPDATE conversations SET updated_at = now(),
    title = CASE WHEN title = '' THEN sqlc.arg(title) ELSE title END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: PinConversationSummary :execrows
-- Pins a summary unless one covering more of the conversation is already pinned (two turns
-- of one conversation may summarise at once: the one that covers more wins).
UPDATE conversations SET summary = CASE
        WHEN summary IS NULL OR (summary->>'through_seq')::int < sqlc.arg(through_seq)::int THEN sqlc.arg(summary)::jsonb
        ELSE summary END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: DeleteConversation :execrows
DELETE FROM conversations WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: InsertMessages :execrows
-- Appends messages in order after the conversation's last seq. Callers lock the conversation
-- row first (TouchConversation) so concurrent turns cannot take the same seq.
INSERT INTO messages (owner_id, conversation_id, turn_id, seq, role, content)
SELECT sqlc.arg(owner_id), sqlc.arg(conversation_id), sqlc.arg(turn_id), base.n + i,
    (sqlc.arg(roles)::text[])[i], (sqlc.arg(contents)::jsonb[])[i]
FROM (SELECT COALESCE(max(seq), 0) AS n FROM messages
      WHERE owner_id = sqlc.arg(owner_id) AND conversation_id = sqlc.arg(conversation_id)) AS base,
    generate_subscripts(sqlc.arg(roles)::text[], 1) AS i;

-- name: ListMessages :many
SELECT * FROM messages WHERE owner_id = sqlc.arg(owner_id) AND conversation_id = sqlc.arg(conversation_id)
ORDER BY seq;
