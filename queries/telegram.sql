-- name: CreateTelegramCode :exec
INSERT INTO telegram_link_codes (owner_id, hash, expires_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(hash), sqlc.arg(expires_at));

-- name: UseTelegramCode :execrows
UPDATE telegram_link_codes SET used_at = sqlc.arg(now)::timestamptz
WHERE owner_id = sqlc.arg(owner_id) AND hash = sqlc.arg(hash) AND used_at IS NULL AND expires_at > sqlc.arg(now);

-- name: LookupTelegramCodeOwner :one
SELECT owner_id FROM telegram_link_codes WHERE hash = sqlc.arg(hash);

-- name: LookupTelegramChatOwner :one
SELECT owner_id FROM telegram_chats WHERE chat_id = sqlc.arg(chat_id);

-- name: LinkTelegramChat :execrows
INSERT INTO telegram_chats (owner_id, chat_id, title)
VALUES (sqlc.arg(owner_id), sqlc.arg(chat_id), sqlc.arg(title))
ON CONFLICT (owner_id, chat_id) DO NOTHING;

-- name: ListTelegramChats :many
SELECT chat_id, title, conversation_id, voice, linked_at FROM telegram_chats
WHERE owner_id = sqlc.arg(owner_id) ORDER BY linked_at;

-- name: GetTelegramChat :one
SELECT chat_id, title, conversation_id, voice, linked_at FROM telegram_chats
WHERE owner_id = sqlc.arg(owner_id) AND chat_id = sqlc.arg(chat_id);

-- name: UnlinkTelegramChat :execrows
DELETE FROM telegram_chats WHERE owner_id = sqlc.arg(owner_id) AND chat_id = sqlc.arg(chat_id);

-- name: SetTelegramConversation :execrows
UPDATE telegram_chats SET conversation_id = sqlc.arg(conversation_id)
WHERE owner_id = sqlc.arg(owner_id) AND chat_id = sqlc.arg(chat_id);

-- name: SetTelegramVoice :execrows
UPDATE telegram_chats SET voice = sqlc.arg(voice)
WHERE owner_id = sqlc.arg(owner_id) AND chat_id = sqlc.arg(chat_id);

-- name: ReceiveTelegramUpdate :execrows
INSERT INTO telegram_updates (owner_id, update_id, chat_id, message)
VALUES (sqlc.arg(owner_id), sqlc.arg(update_id), sqlc.arg(chat_id), sqlc.arg(message))
ON CONFLICT (owner_id, update_id) DO NOTHING;

-- name: TakeTelegramUpdate :one
UPDATE telegram_updates SET status = 'taken'
WHERE owner_id = sqlc.arg(owner_id) AND update_id = sqlc.arg(update_id) AND status = 'queued'
RETURNING chat_id, message;
