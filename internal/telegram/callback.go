package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Callback decides the approval buttons of a Telegram notification (Buttons) in place: the
// Bot API posts a pressed button's callback query to POST /telegram/callback, verified by its
// X-Telegram-Bot-Api-Secret-Token header against STEWARD_TELEGRAM_WEBHOOK_SECRET (set with
// setWebhook's secret_token). The button's callback_data carries the link's token, and the
// decision goes through links.Service.Press's exactly-once claim — the same code path as the
// link page's POST. The answer (answerCallbackQuery, and editMessageReplyMarkup removing the
// buttons) is sent after the claim's transaction, with the owner's bot through the channel
// sender's egress guard; when no bot of the owner's can answer (a forged token names no
// owner), the webhook's reply asks Telegram to run answerCallbackQuery itself.
type Callback struct {
	// Links decides a button's link: links.Service.
	Links Presser
	// Store reads the owner's channels, to answer through the owner's own bot.
	Store *store.Store
	// Secret is STEWARD_TELEGRAM_WEBHOOK_SECRET; empty refuses every callback (404).
	Secret string
	// Sealer opens the owner's Telegram channel's bot token; Sender calls the Bot API.
	Sealer *secret.Sealer
	Sender *channel.Sender
	// Messages serves the rest of the bot's updates — the messages of linked chats, and
	// the buttons of the answers it sent them (docs/ARCHITECTURE.md §19); nil ignores them.
	Messages *Service
}

// Presser decides a one-tap link a button carries: links.Service.Press.
type Presser interface {
	Press(ctx context.Context, token string) (uuid.UUID, steward.Link, steward.View, error)
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
	errCallbackOff = steward.Errorf(steward.CodeNotFound, "Telegram callbacks are not enabled on this deployment (STEWARD_TELEGRAM_WEBHOOK_SECRET is not set)")
	ErrSecret      = steward.Errorf(steward.CodeUnauthorized, "the X-Telegram-Bot-Api-Secret-Token header is missing or wrong")
)

// callbackPrefix starts a Telegram button's callback_data: "l1:" and the link's token
// (3+43 bytes, within the Bot API's 64).
const callbackPrefix = "l1:"

// Links are the one-tap links a notification's buttons carry: links.Issuer.Choices.
type Links interface {
	Choices(text string) []links.Choice
}

// Buttons makes the Telegram inline buttons of a stored notification's links for the
// deliverer to attach to the message (delivery.Deliverer.Buttons): Approve and Deny, each
// carrying its link's token as callback_data. Without a key there are none.
func Buttons(l Links) func(text string) []channel.Button {
	return func(text string) []channel.Button { return buttonsOf(l.Choices(text)) }
}

// buttonsOf are the inline buttons of links: each carries its link's token.
func buttonsOf(cs []links.Choice) []channel.Button {
	var out []channel.Button
	for _, c := range cs {
		label := "❌ Deny"
		if c.Approve {
			label = "✅ Approve"
		}
		out = append(out, channel.Button{Text: label, Data: callbackPrefix + c.Token})
	}
	return out
}

// callbackUpdate is the part of a Bot API Update a callback needs.
type callbackUpdate struct {
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

// Handle handles one webhook update. header is X-Telegram-Bot-Api-Secret-Token. The reply,
// when not nil, is the webhook's JSON answer (a Bot API method for Telegram to run). Only a
// database failure is an error once the secret matched: a used, expired or forged token is
// answered with its text and changes nothing.
func (t *Callback) Handle(ctx context.Context, header string, body []byte) (map[string]any, error) {
	if t == nil || t.Secret == "" {
		return nil, errCallbackOff
	}
	if subtle.ConstantTimeCompare([]byte(header), []byte(t.Secret)) != 1 {
		return nil, ErrSecret
	}
	var u callbackUpdate
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
	owner, link, view, err := t.Links.Press(ctx, token)
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
		return clip(words, 199), err
	}
	return "", err
}

// clip is s cut to n characters, "…" added when it was longer.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// answer answers the press through the owner's own bot, and once it is decided removes the
// buttons; false when there is no such bot or the answer failed (the webhook's reply answers).
func (t *Callback) answer(ctx context.Context, owner uuid.UUID, p Pressed, username string) bool {
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
func (t *Callback) bot(ctx context.Context, owner uuid.UUID, chatID int64, username string) (channel.Target, bool, error) {
	var chs []store.Channel
	err := t.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
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
