package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	. "github.com/stewardhq/steward/internal/store"
)

// telegramChat is the chat id seed links for an owner: a different one per name.
func telegramChat(name string) int64 {
	h := sha256.Sum256([]byte(name))
	return 1000 + int64(h[0])<<8 + int64(h[1])
}

// telegramUpdate is the update id seed stores for an owner.
func telegramUpdate(name string) int64 { return telegramChat(name) * 10 }

func telegramCode(name string) []byte {
	h := sha256.Sum256([]byte("telegram code of " + name))
	return h[:]
}

// seedTelegram gives an owner a link code, a linked chat with a conversation and a stored
// update (migrations/00037_telegram_chats.sql).
func seedTelegram(ctx context.Context, tx *Tx, name string, conv uuid.UUID) error {
	if err := tx.Telegram.CreateCode(ctx, telegramCode(name), time.Now().Add(time.Hour)); err != nil {
		return err
	}
	chat := telegramChat(name)
	if err := tx.Telegram.Link(ctx, chat, "chat of "+name); err != nil {
		return err
	}
	if err := tx.Telegram.SetConversation(ctx, chat, conv); err != nil {
		return err
	}
	_, err := tx.Telegram.Receive(ctx, telegramUpdate(name), chat, []byte(`{"kind":"text","text":"hello from `+name+`"}`))
	return err
}

// probeTelegram: bob lists, reads, links, unlinks, changes and takes none of alice's chats,
// codes and updates; a statement refused by a constraint runs in a transaction of its own.
func probeTelegram(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Telegram.CreateCode", "Telegram.UseCode", "Telegram.Link", "Telegram.Chats", "Telegram.Chat", "Telegram.Unlink",
		"Telegram.SetConversation", "Telegram.SetVoice", "Telegram.Receive", "Telegram.Take")
	alice := telegramChat(a.owner.Name)
	bob := func(what string, fn func(tx *Tx) error, want func(error) bool) {
		t.Helper()
		if err := s.WithOwner(ctx, b.owner.ID, fn); !want(err) {
			t.Errorf("%s: err = %v", what, err)
		}
	}
	notFound := func(err error) bool { return errors.Is(err, ErrNotFound) }
	refused := func(err error) bool { return err != nil }
	bob("chats list", func(tx *Tx) error {
		chats, err := tx.Telegram.Chats(ctx)
		if err == nil && (len(chats) != 1 || chats[0].ChatID != telegramChat(b.owner.Name)) {
			t.Errorf("bob's chats = %+v, want only his own", chats)
		}
		return err
	}, func(err error) bool { return err == nil })
	bob("chat get", func(tx *Tx) error { _, err := tx.Telegram.Chat(ctx, alice); return err }, notFound)
	bob("chat unlink", func(tx *Tx) error { return tx.Telegram.Unlink(ctx, alice) }, notFound)
	bob("chat conversation", func(tx *Tx) error { return tx.Telegram.SetConversation(ctx, alice, b.conv) }, notFound)
	bob("chat voice", func(tx *Tx) error { return tx.Telegram.SetVoice(ctx, alice, true) }, notFound)
	bob("code use", func(tx *Tx) error { return tx.Telegram.UseCode(ctx, telegramCode(a.owner.Name), time.Now()) }, notFound)
	bob("update take", func(tx *Tx) error { _, _, err := tx.Telegram.Take(ctx, telegramUpdate(a.owner.Name)); return err }, notFound)
	bob("chat link of alice's chat", func(tx *Tx) error { return tx.Telegram.Link(ctx, alice, "mine now") },
		func(err error) bool { return errors.Is(err, ErrConflict) })
	bob("code of alice's hash", func(tx *Tx) error {
		return tx.Telegram.CreateCode(ctx, telegramCode(a.owner.Name), time.Now().Add(time.Hour))
	}, refused)
	bob("update in alice's chat", func(tx *Tx) error {
		_, err := tx.Telegram.Receive(ctx, 1, alice, []byte(`{"kind":"text","text":"x"}`))
		return err
	}, refused)
	// Alice's rows are as they were.
	err := s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		c, err := tx.Telegram.Chat(ctx, alice)
		if err != nil || c.Voice || c.ConversationID == nil || *c.ConversationID != a.conv || c.Title != "chat of alice" {
			t.Errorf("alice's chat after bob: %+v, %v", c, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
