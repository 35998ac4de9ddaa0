package links

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
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
		return nil, nil // not a button press: acknowledged, nothing to do
	}
	token, _ := strings.CutPrefix(q.Data, callbackPrefix)
	owner, link, _, err := t.Links.decide(ctx, token)
	var text string
	var se *steward.Error
	switch {
	case err == nil && link.Approve:
		text = "Approved. Steward carries on."
	case err == nil:
		text = "Denied. Nothing was done."
	case errors.As(err, &se) && se.Code != steward.CodeInternal:
		text = se.Message
	default:
		return nil, err
	}
	text = cut(text, 199)
	alert := err != nil
	done := err == nil || steward.ErrorCode(err) == steward.CodeConflict
	if owner != uuid.Nil && q.Message != nil && t.Sender != nil && t.Sealer != nil {
		target, ok, err := t.bot(ctx, owner, q.Message.Chat.ID, q.Message.Chat.Username)
		log := zerolog.Ctx(ctx)
		if err != nil {
			log.Warn().Err(err).Msg("telegram callback: the owner's bot")
		}
		if ok {
			err := t.Sender.BotAPI(ctx, target, "answerCallbackQuery", map[string]any{"callback_query_id": q.ID, "text": text, "show_alert": alert})
			if err == nil {
				if done {
					if err := t.Sender.BotAPI(ctx, target, "editMessageReplyMarkup", map[string]any{"chat_id": q.Message.Chat.ID,
						"message_id": q.Message.MessageID, "reply_markup": map[string]any{"inline_keyboard": [][]channel.Button{}}}); err != nil {
						log.Warn().Err(err).Msg("telegram callback: editMessageReplyMarkup")
					}
				}
				return nil, nil
			}
			log.Warn().Err(err).Msg("telegram callback: answerCallbackQuery")
		}
	}
	return map[string]any{"method": "answerCallbackQuery", "callback_query_id": q.ID, "text": text, "show_alert": true}, nil
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
