package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// Telegram is the owner's linked Telegram chats, their one-time link codes and the updates
// the deployment's bot received from them (migrations/00037_telegram_chats.sql,
// docs/TELEGRAM.md, docs/ARCHITECTURE.md §19).
type Telegram struct{ *conn }

// TelegramChat is a linked chat: its conversation (nil until the first turn) and whether
// answers are also spoken.
type TelegramChat struct {
	ChatID         int64
	Title          string
	ConversationID *uuid.UUID
	Voice          bool
	LinkedAt       time.Time
}

// CreateCode stores a link code's hash, valid until expiresAt.
func (t Telegram) CreateCode(ctx context.Context, hash []byte, expiresAt time.Time) error {
	if err := t.q.CreateTelegramCode(ctx, db.CreateTelegramCodeParams{OwnerID: t.ownerID, Hash: hash, ExpiresAt: expiresAt}); err != nil {
		return notFound("create telegram code", err)
	}
	return nil
}

// UseCode marks an unused, unexpired code used at now; otherwise ErrNotFound.
func (t Telegram) UseCode(ctx context.Context, hash []byte, now time.Time) error {
	n, err := t.q.UseTelegramCode(ctx, db.UseTelegramCodeParams{OwnerID: t.ownerID, Hash: hash, Now: now})
	return rowsOrNotFound("use telegram code", n, err)
}

// Link links a chat to the owner (linking it again changes nothing); a chat linked to
// another owner is ErrConflict.
func (t Telegram) Link(ctx context.Context, chatID int64, title string) error {
	if _, err := t.q.LinkTelegramChat(ctx, db.LinkTelegramChatParams{OwnerID: t.ownerID, ChatID: chatID, Title: title}); err != nil {
		return notFound("link telegram chat", err)
	}
	return nil
}

// Chats lists the owner's linked chats, oldest first.
func (t Telegram) Chats(ctx context.Context) ([]TelegramChat, error) {
	rows, err := t.q.ListTelegramChats(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list telegram chats: %w", err)
	}
	out := make([]TelegramChat, len(rows))
	for i, r := range rows {
		out[i] = telegramChat(db.GetTelegramChatRow(r))
	}
	return out, nil
}

// Chat reads one linked chat; none is ErrNotFound.
func (t Telegram) Chat(ctx context.Context, chatID int64) (TelegramChat, error) {
	r, err := t.q.GetTelegramChat(ctx, db.GetTelegramChatParams{OwnerID: t.ownerID, ChatID: chatID})
	if err != nil {
		return TelegramChat{}, notFound("telegram chat", err)
	}
	return telegramChat(r), nil
}

func telegramChat(r db.GetTelegramChatRow) TelegramChat {
	c := TelegramChat{ChatID: r.ChatID, Title: r.Title, Voice: r.Voice, LinkedAt: r.LinkedAt}
	if r.ConversationID.Valid {
		id := r.ConversationID.UUID
		c.ConversationID = &id
	}
	return c
}

// Unlink removes a linked chat (and its stored updates); none is ErrNotFound.
func (t Telegram) Unlink(ctx context.Context, chatID int64) error {
	n, err := t.q.UnlinkTelegramChat(ctx, db.UnlinkTelegramChatParams{OwnerID: t.ownerID, ChatID: chatID})
	return rowsOrNotFound("unlink telegram chat", n, err)
}

// SetConversation sets the chat's conversation; an unknown chat is ErrNotFound.
func (t Telegram) SetConversation(ctx context.Context, chatID int64, conversationID uuid.UUID) error {
	n, err := t.q.SetTelegramConversation(ctx, db.SetTelegramConversationParams{OwnerID: t.ownerID, ChatID: chatID,
		ConversationID: uuid.NullUUID{UUID: conversationID, Valid: true}})
	return rowsOrNotFound("set telegram conversation", n, err)
}

// SetVoice sets whether the chat's answers are also spoken; an unknown chat is ErrNotFound.
func (t Telegram) SetVoice(ctx context.Context, chatID int64, voice bool) error {
	n, err := t.q.SetTelegramVoice(ctx, db.SetTelegramVoiceParams{OwnerID: t.ownerID, ChatID: chatID, Voice: voice})
	return rowsOrNotFound("set telegram voice", n, err)
}

// Receive stores an update of a linked chat, queued; false when that update_id was stored
// before (Telegram delivering it again), and nothing changes then.
func (t Telegram) Receive(ctx context.Context, updateID, chatID int64, message []byte) (bool, error) {
	n, err := t.q.ReceiveTelegramUpdate(ctx, db.ReceiveTelegramUpdateParams{OwnerID: t.ownerID, UpdateID: updateID, ChatID: chatID, Message: message})
	if err != nil {
		return false, notFound("receive telegram update", err)
	}
	return n == 1, nil
}

// Take claims a queued update once, returning its chat and message; an update already
// taken (or unknown) is ErrNotFound.
func (t Telegram) Take(ctx context.Context, updateID int64) (int64, []byte, error) {
	r, err := t.q.TakeTelegramUpdate(ctx, db.TakeTelegramUpdateParams{OwnerID: t.ownerID, UpdateID: updateID})
	if err != nil {
		return 0, nil, notFound("take telegram update", err)
	}
	return r.ChatID, r.Message, nil
}

// LookupTelegramCode finds the owner of a link code's hash, across owners; an unknown hash
// is ErrNotFound. The door reads only (owner_id, hash).
func (d *Door) LookupTelegramCode(ctx context.Context, hash []byte) (uuid.UUID, error) {
	if len(hash) != 32 {
		return uuid.Nil, fmt.Errorf("telegram code: %w", ErrNotFound)
	}
	id, err := db.New(d.conn()).LookupTelegramCodeOwner(ctx, hash)
	if err != nil {
		return uuid.Nil, notFound("telegram code", err)
	}
	return id, nil
}

// LookupTelegramChat finds the owner a chat is linked to, across owners; an unlinked chat
// is ErrNotFound. The door reads only (owner_id, chat_id).
func (d *Door) LookupTelegramChat(ctx context.Context, chatID int64) (uuid.UUID, error) {
	id, err := db.New(d.conn()).LookupTelegramChatOwner(ctx, chatID)
	if err != nil {
		return uuid.Nil, notFound("telegram chat", err)
	}
	return id, nil
}
