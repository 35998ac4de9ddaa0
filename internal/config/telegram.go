package config

import (
	"errors"
	"strings"
)

// Telegram is the deployment's Telegram bot (docs/TELEGRAM.md): its webhook's secret, its
// token, and the Bot API it calls.
type Telegram struct {
	// TelegramWebhookSecret is the secret_token given to the Bot API's setWebhook for POST
	// /telegram/callback (STEWARD_TELEGRAM_WEBHOOK_SECRET: 1–256 of A-Z, a-z, 0-9, _ and -);
	// a callback without it in X-Telegram-Bot-Api-Secret-Token is refused. Empty: the route
	// answers 404 and Telegram notifications carry no buttons.
	TelegramWebhookSecret string
	// TelegramWebhookSecretParam holds STEWARD_TELEGRAM_WEBHOOK_SECRET
	// (STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM), checked with CheckTelegramSecret.
	TelegramWebhookSecretParam string
	// TelegramBotToken is the deployment's Telegram bot (STEWARD_TELEGRAM_BOT_TOKEN, from
	// @BotFather): it serves the chats owners link to their Steward (docs/TELEGRAM.md). Empty:
	// the bot answers only the approval buttons. It needs TelegramWebhookSecret.
	TelegramBotToken string
	// TelegramBotTokenParam holds STEWARD_TELEGRAM_BOT_TOKEN (STEWARD_TELEGRAM_BOT_TOKEN_SSM),
	// checked with CheckTelegramToken.
	TelegramBotTokenParam string
	// TelegramAPIURL is the Bot API's base URL (STEWARD_TELEGRAM_API_URL, default
	// https://api.telegram.org; a local Bot API server, or a test's fake).
	TelegramAPIURL string
}

// telegram reads the Telegram area: the secret's and the bot token's shapes, the API's URL,
// and that a bot has the webhook secret its updates arrive with.
func (r *reader) telegram() Telegram {
	t := Telegram{
		TelegramWebhookSecret:      r.str("STEWARD_TELEGRAM_WEBHOOK_SECRET", ""),
		TelegramWebhookSecretParam: r.str("STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM", ""),
		TelegramBotToken:           r.str("STEWARD_TELEGRAM_BOT_TOKEN", ""),
		TelegramBotTokenParam:      r.str("STEWARD_TELEGRAM_BOT_TOKEN_SSM", ""),
		TelegramAPIURL:             strings.TrimRight(r.str("STEWARD_TELEGRAM_API_URL", "https://api.telegram.org"), "/"),
	}
	if t.TelegramWebhookSecret != "" {
		if err := CheckTelegramSecret(t.TelegramWebhookSecret); err != nil {
			r.fail("STEWARD_TELEGRAM_WEBHOOK_SECRET", "(hidden)", err.Error())
		}
	}
	r.httpURL("STEWARD_TELEGRAM_API_URL", t.TelegramAPIURL)
	if t.TelegramBotToken != "" {
		if err := CheckTelegramToken(t.TelegramBotToken); err != nil {
			r.fail("STEWARD_TELEGRAM_BOT_TOKEN", "(hidden)", err.Error())
		}
	}
	if (t.TelegramBotToken != "" || t.TelegramBotTokenParam != "") && t.TelegramWebhookSecret == "" && t.TelegramWebhookSecretParam == "" {
		r.fail("STEWARD_TELEGRAM_BOT_TOKEN", "(hidden)", "needs STEWARD_TELEGRAM_WEBHOOK_SECRET too: the bot's updates reach Steward only through its webhook")
	}
	return t
}

// CheckTelegramSecret checks STEWARD_TELEGRAM_WEBHOOK_SECRET, from the environment or SSM.
// The error never quotes the value.
func CheckTelegramSecret(v string) error {
	// A loop, not the regexp ^[A-Za-z0-9_-]{1,256}$: compiling that repetition at package
	// init cost every cold start 3,358 allocations and several milliseconds.
	bad := len(v) == 0 || len(v) > 256
	for i := 0; i < len(v) && !bad; i++ {
		c := v[i]
		bad = !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-')
	}
	if bad {
		return errors.New("is 1–256 characters of A-Z, a-z, 0-9, _ and - (Telegram's secret_token)")
	}
	return nil
}

// CheckTelegramToken checks STEWARD_TELEGRAM_BOT_TOKEN, from the environment or SSM: the
// shape @BotFather gives (<digits>:<at least 30 of A-Z, a-z, 0-9, _ and ->). The error never
// quotes the value.
func CheckTelegramToken(v string) error {
	id, rest, ok := strings.Cut(v, ":")
	bad := !ok || id == "" || len(rest) < 30 || len(v) > 256
	for i := 0; i < len(id) && !bad; i++ {
		bad = id[i] < '0' || id[i] > '9'
	}
	if !bad && CheckTelegramSecret(rest) != nil {
		bad = true
	}
	if bad {
		return errors.New("does not have the shape <digits>:<at least 30 letters, digits, - or _> (a bot token from @BotFather)")
	}
	return nil
}
