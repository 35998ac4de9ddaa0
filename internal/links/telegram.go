package links

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Telegram decides the approval buttons of a Telegram notification (Buttons) in place: the
// Bot API posts a pressed button's callback query to POST /telegram/callback, verified by its
// X-Telegram-Bot-Api-Secret-Token header against STEWARD_TELEGRAM_WEBHOOK_SECRET (set with
// setWebhook's secret_token). The button's callback_data carries the link's token, and the
// decision goes through Service.Decide's exactly-once claim — the same code path as the link
// page's POST. The answer (answerCallbackQuery, and editMessageReplyMarkup removing the
// buttons) is sent after the claim's transaction, with the owner's bot through the channel
// sender's egress guard; when no bot of the owner's can answer (a forged token names no
// owner), the webhook's reply asks Telegram to run answerCallbackQuery itself.
type Telegram struct {
	Links *Service
	// Secret is STEWARD_TELEGRAM_WEBHOOK_SECRET; empty refuses every callback (404).
	Secret string
	// Sealer opens the owner's Telegram channel's bot token; Sender calls the Bot API.
	Sealer *secret.Sealer
	Sender *channel.Sender
	// Messages serves the rest of the bot's updates — the messages of linked chats, and
	// the buttons of the answers it sent them (docs/ARCHITECTURE.md §19); nil ignores them.
	Messages Messages
}

// Messages is the two-way Telegram service (internal/telegram) as the callback uses it.
type Messages interface {
	// Receive handles an update that is not a button press; the reply, when not nil, is
	// the webhook's answer (a Bot API method for Telegram to run).
	Receive(ctx context.Context, body []byte) (map[string]any, error)
	// Decided answers a button pressed in a linked chat of owner's with the deployment's bot
	// (the answer text, the buttons removed when done) and sends the decided turn's outcome
	// (v, nil when nothing was decided) to the chat; false when the chat is not one of its
	// own or the bot could not answer, and the owner's channel is tried next.
	Decided(ctx context.Context, owner uuid.UUID, b Pressed, v *steward.View) bool
}

// Pressed is a button press as the callback decided it.
type Pressed struct {
	QueryID   string
	ChatID    int64
	MessageID int64
	// Text is the answer to show (at most 199 characters); Alert shows it as an alert (a
	// refusal); Done removes the buttons (decided, or no longer decidable).
	Text  string
	Alert bool
	Done  bool
}

// The refusals of the route: no secret configured, or a wrong or missing header.
var (
	errTelegramOff    = steward.Errorf(steward.CodeNotFound, "Telegram callbacks are not enabled on this deployment (STEWARD_TELEGRAM_WEBHOOK_SECRET is not set)")
	ErrTelegramSecret = steward.Errorf(steward.CodeUnauthorized, "the X-Telegram-Bot-Api-Secret-Token header is missing or wrong")
)

// update is the part of a Bot API Update a callback needs.
type update struct {
	UpdateID      int64 `json:"update_id"`
	CallbackQuery *struct {
		ID      string `json:"id"`
		Data    string `json:"data"`
		Message *struct {
			MessageID int64 `json:"message_id"`
			Chat      struct {
				ID       int64  `json:"id"`
				Username string `json:"username"`
			} `json:"chat"`
		} `json:"message"`
	} `json:"callback_query"`
}

// Callback handles one webhook update. header is X-Telegram-Bot-Api-Secret-Token. The reply,
// when not nil, is the webhook's JSON answer (a Bot API method for Telegram to run). Only a
// database failure is an error once the secret matched: a used, expired or forged token is
// answered with its text and changes nothing.
func (t *Telegram) Callback(ctx context.Context, header string, body []byte) (map[string]any, error) {
	if t == nil || t.Secret == "" {
		return nil, errTelegramOff
	}
	if subtle.ConstantTimeCompare([]byte(header), []byte(t.Secret)) != 1 {
		return nil, ErrTelegramSecret
	}
	var u update
	if err := json.Unmarshal(body, &u); err != nil {
		return nil, steward.Errorf(steward.CodeInvalid, "the body is not a Telegram update")
	}
	q := u.CallbackQuery
	if q == nil || q.ID == "" {
		if t.Messages != nil {
			return t.Messages.Receive(ctx, body)
		}
		return nil, nil // not a button press: acknowledged, nothing to do
	}
	token, _ := strings.CutPrefix(q.Data, callbackPrefix)
	owner, link, view, err := t.Links.decide(ctx, token)
	text, err := decisionText(link, err)
	if text == "" {
		return nil, err
	}
	pressed := Pressed{Text: text, Alert: err != nil, Done: err == nil || steward.ErrorCode(err) == steward.CodeConflict}
	if owner != uuid.Nil && q.Message != nil {
		pressed.QueryID, pressed.ChatID, pressed.MessageID = q.ID, q.Message.Chat.ID, q.Message.MessageID
		var v *steward.View
		if err == nil {
			v = &view
		}
		if t.Messages != nil && t.Messages.Decided(ctx, owner, pressed, v) {
			return nil, nil
		}
		if t.answer(ctx, owner, pressed, q.Message.Chat.Username) {
			return nil, nil
		}
	}
	return map[string]any{"method": "answerCallbackQuery", "callback_query_id": q.ID, "text": pressed.Text, "show_alert": true}, nil
}

// decisionText is what a button press answers: the decision made, or the words of a
// readable refusal (used, expired, forged) with that error; "" and the error for any other.
func decisionText(link steward.Link, err error) (string, error) {
	words, readable := steward.Words(err)
	switch {
	case err == nil && link.Approve:
		return "Approved. Steward carries on.", nil
	case err == nil:
		return "Denied. Nothing was done.", nil
	case readable:
		return cut(words, 199), err
	}
	return "", err
}

// answer answers the press through the owner's own bot, and once it is decided removes the
// buttons; false when there is no such bot or the answer failed (the webhook's reply answers).
func (t *Telegram) answer(ctx context.Context, owner uuid.UUID, p Pressed, username string) bool {
	if t.Sender == nil || t.Sealer == nil {
		return false
	}
	target, ok, err := t.bot(ctx, owner, p.ChatID, username)
	log := zerolog.Ctx(ctx)
	if err != nil {
		log.Warn().Err(err).Msg("telegram callback: the owner's bot")
	}
	if !ok {
		return false
	}
	if err := t.Sender.BotAPI(ctx, target, "answerCallbackQuery", map[string]any{"callback_query_id": p.QueryID, "text": p.Text, "show_alert": p.Alert}); err != nil {
		log.Warn().Err(err).Msg("telegram callback: answerCallbackQuery")
		return false
	}
	if p.Done {
		if err := t.Sender.BotAPI(ctx, target, "editMessageReplyMarkup", map[string]any{"chat_id": p.ChatID,
			"message_id": p.MessageID, "reply_markup": map[string]any{"inline_keyboard": [][]channel.Button{}}}); err != nil {
			log.Warn().Err(err).Msg("telegram callback: editMessageReplyMarkup")
		}
	}
	return true
}

// bot is the owner's Telegram channel posting to the callback's chat (by id or @username),
// its secret opened; it reads in its own transaction, closed before any Bot API call.
func (t *Telegram) bot(ctx context.Context, owner uuid.UUID, chatID int64, username string) (channel.Target, bool, error) {
	var chs []store.Channel
	err := t.Links.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		var err error
		chs, err = tx.Channels.List(ctx)
		return err
	})
	if err != nil {
		return channel.Target{}, false, err
	}
	for _, c := range chs {
		if c.Kind != channel.Telegram || !c.Enabled {
			continue
		}
		tg, err := channel.OpenTarget(t.Sealer, owner, c)
		if err != nil {
			return channel.Target{}, false, err
		}
		if tg.Settings.ChatID == strconv.FormatInt(chatID, 10) || (username != "" && strings.EqualFold(tg.Settings.ChatID, "@"+username)) {
			return tg, true, nil
		}
	}
	return channel.Target{}, false, nil
}

// TurnButtons are the Approve and Deny buttons of a suspended turn's pending calls, for an
// answer the deployment's bot sends to a linked chat (docs/ARCHITECTURE.md §19): a pair of
// one-tap links made now, bound like a notification's to the turn, the suspension and the
// calls' args hashes, each button carrying its link's token — the same single-use claim
// decides them. A turn no longer suspended, or no key, has none.
func (s *Service) TurnButtons(ctx context.Context, owner, turnID uuid.UUID) ([]channel.Button, error) {
	if len(s.Key) == 0 {
		return nil, nil
	}
	var out []channel.Button
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		turn, err := tx.Turns.Get(ctx, turnID)
		if err != nil {
			return err
		}
		if turn.Status != steward.StatusSuspended || turn.State == nil || len(turn.State.Pending) == 0 || turn.ExpiresAt == nil {
			return nil
		}
		ids, _, err := s.pair(ctx, tx.Links, turn)
		if err != nil {
			return err
		}
		out = []channel.Button{{Text: "✅ Approve", Data: callbackPrefix + s.token(ids[0])}, {Text: "❌ Deny", Data: callbackPrefix + s.token(ids[1])}}
		return nil
	})
	return out, err
}
